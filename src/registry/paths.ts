/** URL paths of the registry API. Commands and core never build URLs: they call the resource modules. */

/** Identifies one private provider. */
export interface ProviderAddress {
  organization: string;
  namespace: string;
  name: string;
}

const seg = encodeURIComponent;

/** `/api/v2/organizations/:org/registry-providers` */
export function providersPath(organization: string): string {
  return `/api/v2/organizations/${seg(organization)}/registry-providers`;
}

/** `/api/v2/organizations/:org/registry-providers/private/:namespace/:name` */
export function providerPath(p: ProviderAddress): string {
  return `${providersPath(p.organization)}/private/${seg(p.namespace)}/${seg(p.name)}`;
}

/** `…/versions` or `…/versions/:version` */
export function versionsPath(p: ProviderAddress, version?: string): string {
  return `${providerPath(p)}/versions${version === undefined ? '' : `/${seg(version)}`}`;
}

/** `…/versions/:version/platforms` or `…/platforms/:os/:arch` */
export function platformsPath(p: ProviderAddress, version: string, os?: string, arch?: string): string {
  const base = `${versionsPath(p, version)}/platforms`;
  return os === undefined || arch === undefined ? base : `${base}/${seg(os)}/${seg(arch)}`;
}
