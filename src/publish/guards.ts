/**
 * What stops a run before its first write: conflicts (exit 5, with `provider delete` as the way out), and a
 * provider or signing key that is absent and may not be created (exit 4, with the command that fixes it).
 */
import { ApiError, ConflictError } from '../errors.js';
import type { PublishPlan } from './types.js';

/** Throws when the plan cannot be carried out; returns when it can. */
export function assertPublishable(
  plan: PublishPlan,
  context: { hostname: string; keyFile?: string | undefined },
): void {
  const { address, version } = plan;
  const where = `${address.namespace}/${address.name}`;
  if (plan.conflicts.length > 0) {
    const lines = plan.conflicts.map((c) => `  ${c.subject}: ${c.message}`);
    const platformsOnly = plan.conflicts.every((c) => c.platform !== undefined);
    const target = platformsOnly
      ? `${version.version} ${[...new Set(plan.conflicts.map((c) => `--platform ${c.platform}`))].join(' ')}`
      : version.version;
    throw new ConflictError(
      `${where} ${version.version} on ${context.hostname} holds different content than the release (nothing was written):`,
      {
        lines,
        hint: `Delete what differs with \`provider delete ${target}\` (same --hostname/--organization) and run the same command again, or publish the release under a new version.`,
        details: { conflicts: plan.conflicts },
      },
    );
  }
  if (plan.provider.action === 'missing') {
    throw new ApiError(
      `Provider ${where} does not exist on ${context.hostname}, and --no-create-provider forbids creating it`,
      {
        status: 404,
        hint: 'Run without --no-create-provider to create it, or check --organization, --namespace and --name.',
        details: { provider: address },
      },
    );
  }
  if (plan.key.action === 'missing') {
    const file = context.keyFile ?? '<armored-public-key-file>';
    throw new ApiError(
      `Signing key ${plan.key.keyId} is not registered for namespace ${address.namespace} on ${context.hostname}, and --no-register-key forbids registering it`,
      {
        status: 404,
        hint: `Register it with \`provider gpg-keys add ${file}\` (same --hostname/--organization), or run without --no-register-key.`,
        details: { keyId: plan.key.keyId, namespace: address.namespace },
      },
    );
  }
}
