/**
 * What users must change once a provider lives in their private registry: it is a different provider to
 * Terraform (provider-registry-protocol.mdx: "an entirely separate provider"), so configurations take the new
 * source address (`app.terraform.io/<org>/<type>`, or `localterraform.com/<org>/<type>` on Terraform Enterprise,
 * Terraform 1.4 and newer) and existing state is moved with `terraform state replace-provider`.
 */
import type { ProviderReport } from './run.js';

/** One provider's change. */
export interface SourceChange {
  /** The origin's address, `registry.terraform.io/hashicorp/random`. */
  from: string;
  /** The private registry's, `app.terraform.io/acme/random`. */
  to: string;
  /** On Terraform Enterprise, the host-independent alias (`localterraform.com/acme/random`); null on HCP Terraform. */
  alias: string | null;
  requiredProviders: string;
  replaceProvider: string;
}

const HCP_HOSTS = new Set(['app.terraform.io', 'app.eu.terraform.io', 'atlas.hashicorp.com']);

/** The changes for every provider that has a version in the private registry after the run. */
export function sourceChanges(providers: ProviderReport[], constraint: string | undefined): SourceChange[] {
  return providers.flatMap((provider) => {
    const there = provider.versions.filter((v) => v.destination !== null && v.status !== 'failed');
    const to = there[0]?.destination?.source;
    if (to === undefined) return [];
    const [host = '', org = '', type = ''] = to.split('/');
    const alias = HCP_HOSTS.has(host) ? null : `localterraform.com/${org}/${type}`;
    const version = constraint ?? there.map((v) => v.version).at(-1) ?? '';
    const requiredProviders = [
      'terraform {',
      '  required_providers {',
      `    ${type} = {`,
      `      source  = "${to}"`,
      `      version = "${version}"`,
      '    }',
      '  }',
      '}',
    ].join('\n');
    return [
      {
        from: provider.source,
        to,
        alias,
        requiredProviders,
        replaceProvider: `terraform state replace-provider ${provider.source} ${to}`,
      },
    ];
  });
}
