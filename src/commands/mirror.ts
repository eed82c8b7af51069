/**
 * `provider mirror` below the command line: the flags checked before any request, the origin (`--from`, read
 * with the host's own credentials when there are any, as Terraform does), then the run (src/mirror/run.ts) and
 * its report. A version that does not hold ends the run with exit 3, after the others were mirrored.
 */
import * as path from 'node:path';
import { parseHostname, resolveToken } from '../config/index.js';
import { UsageError, VerificationError } from '../errors.js';
import { DEFAULT_ORIGIN } from '../mirror/origin.js';
import { mirrorDocument, renderMirror } from '../mirror/report.js';
import { parsePlatforms, parseProviders, versionSelector } from '../mirror/select.js';
import type { RunContext } from './context.js';
import type { SessionCore } from './session.js';

/** The flags of `provider mirror`. */
export interface MirrorFlags {
  from?: string;
  versions?: string;
  platforms?: string;
  dryRun?: boolean;
  toDir?: string;
}

/** What `provider mirror` is asked to do: the flags and the providers named. */
export interface MirrorOptions extends MirrorFlags {
  providers: string[];
}

/** Runs `provider mirror <namespace>/<type>…`; returns 0, or throws (exit 3 when a version did not hold). */
export const runMirror: SessionCore<MirrorOptions> = async (context, _session, options) => {
  const { output } = context;
  const providers = parseProviders(options.providers);
  const select = versionSelector(options.versions);
  const platforms = parsePlatforms(options.platforms);
  if (options.toDir === undefined || options.toDir.trim() === '') {
    throw new UsageError(
      'provider mirror needs --to-dir <dir>: the folder the verified releases are written to',
      {
        hint: 'Mirror into a folder (provider mirror hashicorp/random --to-dir ./mirror), then publish each version folder with provider publish <folder>.',
      },
    );
  }
  const apiHost = parseHostname(options.from ?? DEFAULT_ORIGIN, '--from');
  const base = new URL(`${apiHost.baseUrl}/`);
  const [{ createOrigin }, { createDownloader }, { runMirror: run }] = await Promise.all([
    import('../mirror/origin.js'),
    import('../registry/downloads.js'),
    import('../mirror/run.js'),
  ]);
  const origin = createOrigin({ base, output, signal: context.signal, token: originToken(context, apiHost) });
  const toDir = path.resolve(context.cwd, options.toDir);
  const reports = await run({
    origin,
    originUrl: apiHost.baseUrl,
    providers,
    select,
    platforms,
    toDir,
    dryRun: options.dryRun === true,
    cwd: context.cwd,
    downloader: createDownloader({ output, signal: context.signal }),
    output,
    now: context.now,
    signal: context.signal,
  });
  const document = mirrorDocument({
    origin: apiHost.host,
    toDir,
    dryRun: options.dryRun === true,
    providers: reports,
  });
  const failed = reports.flatMap((p) =>
    p.versions.filter((v) => v.status === 'failed').map((v) => `${p.source} ${v.version}`),
  );
  if (failed.length > 0) {
    if (!output.json) renderMirror(output, document);
    throw new VerificationError(
      `${failed.length === 1 ? 'A version' : `${failed.length} versions`} did not hold up and nothing of ${failed.length === 1 ? 'it' : 'them'} was written: ${failed.join(', ')}`,
      {
        hint: 'Each failed version says why above; the other versions were mirrored. Run the same command again once the origin serves them whole.',
        details: { report: document },
      },
    );
  }
  if (output.json) output.resultJson(document);
  else renderMirror(output, document);
  return 0;
};

/**
 * The origin host's own credentials (`TF_TOKEN_<host>`, credentials.tfrc.json), sent to its registry as
 * Terraform sends them; TFE_TOKEN is the destination's and is not sent. None: anonymous reads.
 */
function originToken(context: RunContext, apiHost: ReturnType<typeof parseHostname>): string | undefined {
  const env = { ...context.env, TFE_TOKEN: undefined };
  try {
    return resolveToken({ apiHost, env, homeDir: context.homeDir }).token;
  } catch (error) {
    if (error instanceof UsageError) return undefined;
    throw error;
  }
}
