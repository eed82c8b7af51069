/**
 * Waiting for the registry to take the files in: poll the version and its platforms until
 * `shasums-uploaded`, `shasums-sig-uploaded` and every release platform's `provider-binary-uploaded` are
 * true, backing off from `pollMinMs` to `pollMaxMs`. Past the timeout: exit 6, and a re-run resumes. A poll is
 * not a retry (each read is retried by the client); it waits with the retry module's pause and deadline.
 */
import { TimeoutError } from '../errors.js';
import { deadlineIn, pause } from '../net/retry.js';
import { RESUME_HINT } from '../registry/httpErrors.js';
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import { listPlatforms } from '../registry/providerPlatforms.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';
import { getVersion } from '../registry/versions.js';
import { platformName } from '../terraform/names.js';

/** What the waiter needs. */
export interface WaitInput {
  client: RegistryClient;
  address: ProviderAddress;
  version: string;
  /** File names of SHA256SUMS and the signature, for messages. */
  shasumsFile: string;
  signatureFile: string;
  /** The release's platforms: only these must be uploaded. */
  platforms: { os: string; arch: string; filename: string }[];
  timeoutMs: number;
  pollMinMs: number;
  pollMaxMs: number;
  now: () => number;
  signal?: AbortSignal | undefined;
}

/** What the last poll read: the version with every file flagged uploaded, and its platforms. */
export interface UploadedState {
  version: VersionResource;
  platforms: PlatformResource[];
}

/**
 * Polls until every file is flagged uploaded; resolves with the number of polls and what the last one read (the
 * consumer check starts from it instead of reading it again), or throws TimeoutError.
 */
export async function waitForUploads(input: WaitInput): Promise<{ polls: number; state: UploadedState }> {
  const deadline = deadlineIn(input.timeoutMs, input.now);
  let delay = input.pollMinMs;
  for (let polls = 1; ; polls++) {
    const { missing, state } = await missingFiles(input);
    if (state !== undefined) return { polls, state };
    const elapsed = deadline.elapsedMs();
    if (elapsed >= input.timeoutMs) {
      throw new TimeoutError(
        `The registry had not processed ${missing.join(', ')} after ${seconds(input.timeoutMs)}`,
        {
          hint: 'The uploads were sent; run the same command again to resume (it uploads only what is still missing), or allow more time with --wait-timeout.',
          details: { missing, waitedMs: elapsed },
        },
      );
    }
    await pause(Math.min(delay, input.timeoutMs - elapsed), input.signal, {
      message: 'Interrupted while waiting for the registry',
      hint: RESUME_HINT,
    });
    delay = Math.min(delay * 2, input.pollMaxMs);
  }
}

/** The files the registry does not yet report as uploaded; with none missing, what was read. */
async function missingFiles(
  input: WaitInput,
): Promise<{ missing: string[]; state?: UploadedState | undefined }> {
  // Both reads at once (one round trip); the platforms' answer is used only when the version exists.
  const listing = listPlatforms(input.client, input.address, input.version);
  listing.catch(() => undefined);
  const version = await getVersion(input.client, input.address, input.version);
  if (version === undefined) return { missing: [`version ${input.version} (not found)`] };
  const missing: string[] = [];
  if (!version.attributes['shasums-uploaded']) missing.push(input.shasumsFile);
  if (!version.attributes['shasums-sig-uploaded']) missing.push(input.signatureFile);
  const platforms = await listing;
  const remote = new Map(platforms.map((p) => [platformName(p.attributes), p]));
  for (const platform of input.platforms) {
    if (remote.get(platformName(platform))?.attributes['provider-binary-uploaded'] !== true) {
      missing.push(platform.filename);
    }
  }
  return missing.length === 0 ? { missing, state: { version, platforms } } : { missing };
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.round(ms / 100) / 10}s`;
}
