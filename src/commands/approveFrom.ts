/**
 * `provider approve … --from <origin>`: a version approved before it is mirrored, verified as `provider mirror`
 * verifies it (src/mirror/stage.ts: the signed list with the origin's keys, every platform's zip downloaded and
 * held against its signed line, the whole folder checked as `provider verify` does) into a scratch folder that is
 * removed after. The approval is then bound to the origin's SHA256SUMS and signing key, which a mirror copies byte
 * for byte: the same record admits the version at the mirror's door and, once mirrored, wherever the private
 * registry serves it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { parseHostname } from '../config/index.js';
import { ApiError, UsageError } from '../errors.js';
import { parsePlatformName } from '../terraform/names.js';
import { provenBy, signedFacts, type ProvenSignature } from '../lockfile/admission.js';
import type { Progress } from '../ui/progress.js';
import type { RunContext } from './context.js';
import { originToken } from './mirror.js';

/** What approving needs to know of a version, once verified. */
export interface VerifiedForApproval {
  /** The SHA-256 of its SHA256SUMS, lower-case hex. */
  sha256sums: string;
  signature: ProvenSignature;
}

/** Verifies `<namespace>/<type> <version>` at the origin `from`; the host it was read from, and what it proved. */
export async function verifyAtOrigin(
  context: RunContext,
  from: string,
  provider: { namespace: string; type: string },
  version: string,
  progress: Progress,
  platformsFlag?: string,
): Promise<VerifiedForApproval & { host: string }> {
  const [{ createOrigin }, { createDownloader }, { stageVersion }, { tuningFromEnv }, { parsePlatforms }] =
    await Promise.all([
      import('../mirror/origin.js'),
      import('../registry/downloads.js'),
      import('../mirror/stage.js'),
      import('../publish/tuning.js'),
      import('../mirror/select.js'),
    ]);
  const asked = parsePlatforms(platformsFlag);
  const apiHost = parseHostname(from, '--from');
  const tuning = tuningFromEnv(context.env);
  const { output, signal } = context;
  const origin = createOrigin({
    ...{ base: new URL(`${apiHost.baseUrl}/`), output, signal, token: originToken(context, apiHost) },
    ...{ retry: tuning.retry, timeoutMs: tuning.requestTimeoutMs },
  });
  const label = `${provider.namespace}/${provider.type} ${version}`;
  const listed = (await origin.versions(provider)).find((v) => v.version === version);
  if (listed === undefined)
    throw new ApiError(`${label} is not on ${origin.host}`, {
      status: 404,
      hint: `provider mirror ${provider.namespace}/${provider.type} --from ${from} --dry-run --versions '>= 0.0.0' lists what it serves.`,
    });
  // Every platform it lists, or those named (the protocol only recommends the list).
  const platforms =
    asked ?? (listed.platforms ?? []).flatMap((p) => parsePlatformName(`${p.os}_${p.arch}`) ?? []);
  if (platforms.length === 0)
    throw new UsageError(`${label}: ${origin.host} lists no platforms for it, and none was asked for`, {
      hint: 'Name the platforms to verify with --platforms linux_amd64,darwin_arm64 (as provider mirror asks): each is downloaded and checked.',
    });
  const root = await mkdtemp(path.join(context.tmpDir, 'provider-approve-'));
  const folder = path.join(root, 'version');
  try {
    const downloader = createDownloader({
      ...{ output, signal, baseDelayMs: tuning.retry.baseDelayMs, timeoutMs: tuning.requestTimeoutMs },
    });
    let proven: VerifiedForApproval | undefined;
    await stageVersion({
      ...{ cwd: context.cwd, downloader, output, progress, now: context.now, signal },
      ...{ origin, originUrl: apiHost.baseUrl, provider, version, protocols: listed.protocols ?? [] },
      ...{ platforms, unlisted: (listed.platforms ?? []).length === 0, folder, root, verify: true },
      // What the checked signature covers, kept as it was checked: the SHA256SUMS bytes and the signer.
      admit: (signed) => {
        const signature = provenBy(signed.signer);
        proven = { signature, sha256sums: signedFacts(signature, signed.shasumsBytes).sha256sums };
      },
    });
    return { host: origin.host, ...proven! };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
