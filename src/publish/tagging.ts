/**
 * Setting the version's tags after the version exists (created in this run or found): one PATCH that replaces
 * its whole tag set, as the platform's PATCH does (providers/version-tags.mdx), sent only when the plan says
 * the tags differ from what the version holds.
 */
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { setVersionTags } from '../registry/tagBindings.js';
import { formatTags } from '../registry/tags.js';
import type { Progress } from '../ui/progress.js';
import type { PublishOutcome, PublishPlan } from './types.js';

/** What tagging needs. */
export interface TagStepInput {
  client: RegistryClient;
  address: ProviderAddress;
  progress: Progress;
  plan: PublishPlan;
  outcome: PublishOutcome;
}

/** Replaces the version's tags when the plan says so; records it in the outcome. */
export async function tagStep(input: TagStepInput): Promise<void> {
  const { plan, progress } = input;
  if (plan.tags.action !== 'set') return;
  const { version } = plan.version;
  const shown = formatTags(plan.tags.wanted);
  const step = progress.step(`Tagging version ${version}: ${shown}`);
  try {
    await setVersionTags(input.client, input.address, version, plan.tags.wanted);
  } catch (error) {
    step.fail();
    throw error;
  }
  input.outcome.tagsSet = true;
  step.succeed(`Tagged version ${version}: ${shown}`);
}
