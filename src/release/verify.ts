/**
 * `verifyRelease`: everything Terraform and the registry will check, done locally before any write. The
 * core takes its world as arguments (cwd, output, clock, key source) and returns plain data. It runs the stages
 * of src/release/stages.ts one after another, in a hashing session of its own unless it is given one.
 */
import { HashingSession } from './hashing/hashing.js';
import {
  checkRelease,
  checkSignature,
  readRelease,
  startHashing,
  type VerifyReleaseOptions,
} from './stages.js';
import type { VerifiedRelease } from './types.js';

/** Verifies a release directory; throws UsageError or VerificationError, else returns the release. */
export async function verifyRelease(options: VerifyReleaseOptions): Promise<VerifiedRelease> {
  const session = options.session ?? new HashingSession();
  try {
    const read = await readRelease(options);
    const hashing = await startHashing(read, session, {
      hashing: options.hashing,
      storedLater: false,
      uploads: false,
    });
    const signed = await checkSignature(read, options, hashing);
    const staged = await checkRelease(read, hashing, signed, session);
    return await staged.withLockHashes();
  } finally {
    if (options.session === undefined) session.close();
  }
}
