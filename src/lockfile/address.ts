/**
 * The address a lock file records a private provider under: `<hostname>/<namespace>/<type>`, where the hostname
 * is the platform's (`app.terraform.io`, or the TFE host, with its port when not 443) and the namespace is the
 * organization's (HCP Terraform private registry: `source = "app.terraform.io/<organization>/<name>"`). Written
 * as Terraform writes `addrs.Provider.String()`: the hostname for display (`svchost.ForDisplay`: Unicode, lower
 * case, default port dropped) and namespace and type case-folded (`addrs.ParseProviderPart`).
 */
import { domainToUnicode } from 'node:url';
import type { ApiHost } from '../config/index.js';

/** The lock file address of provider `name` in `namespace` on `apiHost`. */
export function lockAddress(apiHost: ApiHost, namespace: string, name: string): string {
  const port = apiHost.host.slice(apiHost.hostname.length);
  const hostname = domainToUnicode(apiHost.hostname) || apiHost.hostname;
  return `${hostname}${port}/${namespace.toLowerCase()}/${name.toLowerCase()}`;
}

/** `<host>/<namespace>`: the lock file addresses of the providers of `namespace` on `apiHost`, without the type. */
export function registryPrefix(apiHost: ApiHost, namespace: string): string {
  return lockAddress(apiHost, namespace, '').replace(/\/$/, '');
}

/**
 * A host as a lock file writes it (`svchost.ForDisplay`): an internationalised name in Unicode, lower case, its port
 * kept (`xn--bcher-kva.example:8443` → `bücher.example:8443`). For hosts known only by their URL's `host`.
 */
export function lockHost(host: string): string {
  const [, hostname = host, port = ''] = /^(.*?)(:\d+)?$/.exec(host) ?? [];
  return `${(domainToUnicode(hostname) || hostname).toLowerCase()}${port}`;
}
