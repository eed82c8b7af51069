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
