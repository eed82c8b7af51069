/**
 * The last steps of a run: wait until the registry reports every file uploaded (step 7), then check what
 * `terraform init` will get (step 8, issue 5's consumer check), each shown as a progress step.
 */
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import type { UploadableRelease } from '../release/types.js';
import type { Output } from '../ui/output.js';
import type { Progress } from '../ui/progress.js';
import { checkConsumerView } from '../consumer/check.js';
import type { CheckReport } from './document.js';
import type { PublishTuning } from './tuning.js';
import { waitForUploads, type UploadedState } from './wait.js';

/** What both steps need. */
export interface FinishContext {
  client: RegistryClient;
  address: ProviderAddress;
  release: UploadableRelease;
  output: Output;
  progress: Progress;
  tuning: PublishTuning;
  signal?: AbortSignal | undefined;
  clock: () => number;
}

/**
 * Step 7: polls the uploaded flags until they are all true, or throws TimeoutError after `timeoutMs`; resolves
 * with what the last poll read, for step 8.
 */
export async function waitStep(ctx: FinishContext, timeoutMs: number): Promise<UploadedState> {
  const { release, tuning } = ctx;
  const step = ctx.progress.step('Waiting for the registry to report every file uploaded');
  const { polls, state } = await waitForUploads({
    client: ctx.client,
    address: ctx.address,
    version: release.version,
    shasumsFile: release.shasums.filename,
    signatureFile: release.signature.filename,
    platforms: release.platforms,
    timeoutMs,
    pollMinMs: tuning.pollMinMs,
    pollMaxMs: tuning.pollMaxMs,
    now: ctx.clock,
    signal: ctx.signal,
  }).catch((error: unknown) => {
    step.fail();
    throw error;
  });
  step.succeed(`The registry reports every file uploaded (${polls} poll${polls === 1 ? '' : 's'})`);
  return state;
}

/**
 * Step 8: the consumer check; throws VerificationError (exit 3) when terraform init would refuse the version.
 * `uploaded`: the version and its platforms as step 7's last poll read them, all files flagged uploaded (the check
 * starts from them rather than reading the same two documents again); without it, the check reads them.
 */
export async function checkStep(ctx: FinishContext, uploaded?: UploadedState): Promise<CheckReport> {
  const { version } = ctx.release;
  const step = ctx.progress.step('Checking what terraform init will get');
  const result = await checkConsumerView({
    client: ctx.client,
    address: ctx.address,
    version,
    output: ctx.output,
    retryDelayMs: ctx.tuning.retry.baseDelayMs,
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    ...(uploaded === undefined ? {} : { read: uploaded }),
  }).catch((error: unknown) => {
    step.fail();
    throw error;
  });
  const n = result.platforms.length;
  step.succeed(
    `terraform init will accept ${version}: signature by ${result.signature.keyId}, ${n} platform${n === 1 ? '' : 's'} listed in SHA256SUMS`,
  );
  return {
    status: 'passed',
    keyId: result.signature.keyId,
    signingKeyId: result.signature.signingKeyId,
    platforms: n,
  };
}
