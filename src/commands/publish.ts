/**
 * `provider publish` below the command line: verify, read the registry, plan, (stop for --dry-run), execute,
 * wait for the uploaded flags, check what consumers get, and report — from one plan. Nothing is written before
 * the signature, the layout, the zips' directories (and with --verify-first every zip) verified and the plan holds
 * no conflict; by default each zip is proven by the read that uploads it, and a zip that fails undoes what the run
 * created. A re-run after any other failure resumes.
 */
import { InterruptedError, VerificationError } from '../errors.js';
import { verifyOptionsFromFlags, type VerifyFlags } from './verify.js';
import { appendStepSummary, failureSummary } from '../ui/githubSummary.js';
import type { Output } from '../ui/output.js';
import { createProgress } from '../ui/progress.js';
import { lockAddress } from '../lockfile/address.js';
import { entryHashes, releaseMaterial } from '../lockfile/source.js';
import { publishDocument, type CheckReport } from '../publish/document.js';
import { assertPublishable } from '../publish/guards.js';
import { isNoop, planPublish } from '../publish/plan.js';
import { markdownSummary, renderPublish } from '../publish/render.js';
import type { PublishTuning } from '../publish/tuning.js';
import { parseTags } from '../registry/tags.js';
import { providerAddress, type RegistrySession, type Session, type SessionCore } from './session.js';
import type { PublishOutcome, PublishPlan, RemoteState } from '../publish/types.js';
import type { UploadableRelease, VerifiedRelease } from '../release/types.js';
import { HashingSession } from '../release/hashing/hashing.js';
import {
  checkRelease,
  checkSignature,
  readRelease,
  startHashing,
  type StagedRelease,
} from '../release/stages.js';
import type { Settings } from '../config/index.js';
import type { RunContext } from './context.js';
import { policyFileOf } from './policyFile.js';
import type { PublishPolicy } from './publishPolicy.js';
import type { Progress } from '../ui/progress.js';
import type { RemoteZip } from '../release/remoteZip.js';
import type { ProviderAddress } from '../registry/paths.js';
import { EarlyReads, type NetworkSteps } from './publishReads.js';

/** The flags of `provider publish`, as commander hands them over (the global ones go to the session). */
export interface PublishFlags extends VerifyFlags {
  concurrency?: string;
  waitTimeout?: string;
  dryRun?: boolean;
  /** false with --no-wait. */
  wait?: boolean;
  /** false with --no-check. */
  check?: boolean;
  /** false with --no-create-provider. */
  createProvider?: boolean;
  /** false with --no-register-key. */
  registerKey?: boolean;
  /** `--tag key=value`, repeatable: the version's tags (its whole set is replaced with them). */
  tag?: string[];
  /** Read and check every zip before the first write, instead of while uploading it. */
  verifyFirst?: boolean;
  /**
   * The policy file: its `versions` and pinned `keys` apply (./publishPolicy.ts); false: none, not even the
   * configuration's (a mirror's publish: the mirror decided already).
   */
  policy?: string | false;
}

/** What `provider publish` is asked to do: the flags, the release folder, and the tuning the session has too. */
export interface PublishOptions extends PublishFlags {
  dir: string;
  /** Retries, timeouts and polls (from the PROVIDER_* variables); the session's client has the same. */
  tuning: PublishTuning;
  /**
   * Where the steps and uploads are shown, when a caller renders its own run (`provider mirror`, whose
   * publish reports its JSON document to a sink of its own); without it, the rendering the output chooses.
   */
  progress?: Progress | undefined;
  /** Zips at links rather than in the folder (`provider mirror` streaming from its origin), by file name. */
  remote?: ReadonlyMap<string, RemoteZip> | undefined;
  /** Failures besides bytes that do not verify after which what the run created is removed (the origin's). */
  undoAfter?: ((error: unknown) => boolean) | undefined;
}

/**
 * Runs `provider publish [dir]`; returns the exit code (0) or throws. Under GitHub Actions the step summary
 * says the outcome either way: the publish table, or the error. The run's hashing session is closed at its end.
 */
export const runPublish: SessionCore<PublishOptions> = async (context, session, options) => {
  const hashing = new HashingSession();
  try {
    return await publishRelease(context, session, { ...options, hashing });
  } catch (error) {
    await appendStepSummary(context.output, context.env, failureSummary('provider publish', error));
    throw error;
  } finally {
    hashing.close();
  }
};

/**
 * The verification's stages, with the registry's reads between them: the release is read (what it is becomes
 * known), its files hashed, and the registry's side of it read meanwhile (reads only); the signature checked
 * (and whether its key is registered read), then the rest. The reads are dropped when the release does not
 * verify. The release's `h1:` hashes are left for later (`withLockHashes`), off the path to the first upload.
 */
async function verifyWhileReading(
  context: RunContext,
  session: Session,
  options: PublishOptions & { hashing: HashingSession },
  reads: EarlyReads,
): Promise<{ staged: StagedRelease; settings: Settings }> {
  const { hashing } = options;
  try {
    const { releaseOptions, settings } = await verifyOptionsFromFlags(context, session, options, 'publish');
    const policy = await ownPolicy(context, settings, options.policy);
    const read = await readRelease({ ...releaseOptions, remote: options.remote });
    const hashed = await startHashing(read, hashing, {
      hashing: releaseOptions.hashing,
      storedLater: true,
      uploads: true,
      streamed: !verifiesFirst(options),
    });
    reads.start(read.identity);
    const signed = await checkSignature(read, releaseOptions, hashed);
    if (policy !== undefined) {
      const release = { ...read.identity, shasums: read.shasums.content };
      policy.admit(release, signed.signer, context.now());
    }
    reads.signed(signed.signer);
    return { staged: await checkRelease(read, hashed, signed, hashing), settings };
  } catch (error) {
    reads.drop();
    throw error;
  }
}

/** The run's policy (./publishPolicy.ts, loaded only when a policy file is named); undefined: none. */
async function ownPolicy(
  context: RunContext,
  settings: Settings,
  flag: string | false | undefined,
): Promise<PublishPolicy | undefined> {
  if (flag === false || policyFileOf(flag, settings, context.cwd) === undefined) return undefined;
  const { publishPolicy } = await import('./publishPolicy.js');
  return publishPolicy(context, settings, flag);
}

/**
 * Whether every zip is read and checked before the first write (`--verify-first`, and a dry run, which writes
 * nothing and so checks everything), rather than by the read that uploads it.
 */
function verifiesFirst(options: PublishOptions): boolean {
  // Remote zips (a mirror streaming from its origin) are only ever proven by the reads that upload them.
  const remote = options.remote !== undefined && options.remote.size > 0;
  return !remote && (options.verifyFirst === true || options.dryRun === true);
}

/** The publish itself: verify, read, plan, execute, wait, check, report. */
async function publishRelease(
  context: RunContext,
  session: Session,
  options: PublishOptions & { hashing: HashingSession },
): Promise<number> {
  const { output, signal } = context;
  const { tuning } = options;
  const clock = (): number => context.now().getTime();
  const started = clock();
  // Checked before anything else, the release and its key included: a bad tag sends no request.
  const tags = parseTags(options.tag);
  // The network side (got, the registry's schemas: some 50 ms of loading on a small machine) loads while the
  // files are hashed, on the main thread's share of that time, rather than before the hashing starts; and the
  // registry's side of the release is read meanwhile (reads only; dropped if the release does not verify).
  let loadingNetwork: Promise<NetworkSteps> | undefined;
  const loadNetwork = (): Promise<NetworkSteps> => (loadingNetwork ??= import('../publish/network.js'));
  const reads = new EarlyReads(session, loadNetwork, {
    output,
    signal,
    retryDelayMs: tuning.retry.baseDelayMs,
    readTags: tags.length > 0,
  });
  const { staged, settings } = await verifyWhileReading(context, session, options, reads);
  const { release } = staged;
  // The h1: lock hashes. Verified first, the zips' stored entries are hashed for them now, while the files upload
  // (the verification left them out of its read, on the path to the first upload). Otherwise the reads that
  // upload the zips take them, and they are put together once those are done. The report waits for them.
  const stopHashing = new AbortController();
  const hashed = (): Promise<VerifiedRelease> =>
    staged.withLockHashes(AbortSignal.any([signal, stopHashing.signal]));
  if (verifiesFirst(options)) hashed().catch(() => undefined);
  // Whatever ends the run from here (a failure before the progress starts too), no read started during the
  // verification is left running, nor the h1: hashing.
  try {
    const network = await loadNetwork();
    const registry = await session.registry();
    const address = providerAddress(registry, release.name);
    const hostname = settings.apiHost.host;
    const reporting: Reporting = {
      context,
      hostname,
      started,
      clock,
      hashed,
      lock: (whole) => ({
        address: lockAddress(settings.apiHost, address.namespace, address.name),
        version: whole.version,
        hashes: entryHashes(releaseMaterial(whole), undefined),
      }),
    };
    const progress =
      options.progress ?? (await createProgress(output, { stream: context.stderr, now: clock }));
    try {
      const reading = progress.step(
        `Reading ${address.namespace}/${address.name} ${release.version} on ${hostname}`,
      );
      const remote = await reads.result(release);
      reading.succeed();
      const plan = planPublish(release, remote, {
        address,
        options: {
          createProvider: options.createProvider !== false,
          registerKey: options.registerKey !== false,
          tags,
        },
      });
      for (const extra of plan.extraPlatforms) {
        output.warn(
          `the registry also holds ${extra.os}_${extra.arch} for ${release.version}, which this release does not have (kept, not deleted)`,
        );
      }
      if (options.dryRun === true) {
        await reportPublish(reporting, {
          plan,
          waited: false,
          check: { status: 'skipped', reason: 'dry run' },
        });
        assertPublishable(plan, { hostname, keyFile: options.key });
        return 0;
      }
      assertPublishable(plan, { hostname, keyFile: options.key });
      // The zips this run does not upload (the registry has them) are read and checked now, before any write.
      if (!verifiesFirst(options)) await staged.verifyNow(notUploaded(plan), signal);
      const steps = { ...{ network, client: registry.client, address, progress, plan, remote }, release };
      const done = await carryOut(context, options, { ...steps, staged }, settings);
      await reportPublish(reporting, { plan, ...done });
      return 0;
    } catch (error) {
      // Bytes that do not verify are said as they are, Ctrl-C or not: running again would not finish the job.
      throw signal.aborted && !(error instanceof VerificationError) ? resumable(error) : error;
    } finally {
      progress.stop();
    }
  } finally {
    reads.drop();
    stopHashing.abort();
  }
}

/** The paths of the zips a plan does not upload. */
function notUploaded(plan: PublishPlan): Set<string> {
  return new Set(plan.platforms.filter((p) => p.action === 'skip').map((p) => p.path));
}

/** The paths of the zips a plan meant to upload that the registry turned out to have already. */
function foundUploaded(plan: PublishPlan, outcome: PublishOutcome): Set<string> {
  const found = plan.platforms.filter((p) => outcome.platforms.get(`${p.os}_${p.arch}`)?.uploaded === false);
  return new Set(found.map((p) => p.path));
}

/** What carrying out a plan needs: the network steps, the registry's side, the plan and the release. */
interface CarryOutSteps {
  network: NetworkSteps;
  client: RegistrySession['client'];
  address: ProviderAddress;
  progress: Progress;
  plan: PublishPlan;
  remote: RemoteState;
  release: UploadableRelease;
  staged: StagedRelease;
}

/**
 * Executes the plan (nothing when it is a no-op), sets the version's tags, waits for the uploaded flags and
 * checks what consumers get, as the options ask; says what was done for the report.
 */
async function carryOut(
  context: RunContext,
  options: PublishOptions & { hashing: HashingSession },
  { network, client, address, progress, plan, remote, release, staged }: CarryOutSteps,
  settings: Settings,
): Promise<Pick<PublishReport, 'outcome' | 'waited' | 'check'>> {
  const { output, signal } = context;
  const { tuning } = options;
  const clock = (): number => context.now().getTime();
  const noop = isNoop(plan);
  const outcome = network.emptyOutcome();
  try {
    if (!noop) {
      await network.executePlan(
        {
          ...{ client, address, output, progress, tuning, signal, release, remote, plan },
          version: release.version,
          concurrency: settings.concurrency,
          files: options.hashing,
        },
        outcome,
      );
      // A zip another publisher uploaded meanwhile was not read by an upload: it is checked now, still here.
      if (!verifiesFirst(options)) await staged.verifyNow(foundUploaded(plan, outcome), signal);
    }
  } catch (error) {
    // Bytes that do not verify (or changed during the run): what this run created goes, so that nothing of a
    // release that does not hold stays in the registry; so too when a mirror's origin stopped serving a zip.
    // Anything else (the registry's network, Ctrl-C) is resumed instead.
    if ((error instanceof VerificationError || options.undoAfter?.(error) === true) && !signal.aborted)
      await network.undoRun({ client, address, version: release.version, outcome, output });
    throw error;
  }
  // The version exists now (created above or found): its tags, when they differ from those asked for.
  await network.tagStep({ client, address, progress, plan, outcome });
  const finish = { client, address, release, output, progress, tuning, signal, clock };
  // Nothing written means nothing to wait for; --no-wait leaves the uploads unconfirmed, so no check either.
  const waited = !noop && options.wait !== false;
  const uploaded = waited ? await network.waitStep(finish, settings.waitTimeoutMs) : undefined;
  let check: CheckReport = { status: 'skipped', reason: '--no-check' };
  if (options.wait === false && !noop) {
    check = { status: 'skipped', reason: '--no-wait: the registry had not confirmed the uploads' };
  } else if (options.check !== false) {
    check = await network.checkStep(finish, uploaded);
  }
  return { outcome, waited, check };
}

/** What the report of a run is made from besides the plan and what was done. */
interface Reporting {
  context: RunContext;
  hostname: string;
  started: number;
  clock: () => number;
  /** The release with its `h1:` hashes, to come. */
  hashed: () => Promise<VerifiedRelease>;
  lock: (whole: VerifiedRelease) => PublishReport['lock'];
}

/** What a run did, as `publishDocument` reports it. */
type PublishReport = Parameters<typeof publishDocument>[0];

/** Reports the run (its document, and the step summary under GitHub Actions), once the `h1:` hashes are in. */
async function reportPublish(
  { context, hostname, started, clock, hashed, lock }: Reporting,
  done: Pick<PublishReport, 'plan' | 'waited' | 'check'> & Partial<Pick<PublishReport, 'outcome'>>,
): Promise<void> {
  const whole = await hashed();
  const doc = publishDocument({
    ...done,
    release: whole,
    hostname,
    lock: lock(whole),
    durationMs: clock() - started,
  });
  report(context.output, doc);
  await appendStepSummary(context.output, context.env, markdownSummary(doc));
}

/** Whatever was in flight when Ctrl-C came, the message says what stopped and the hint how to finish. */
function resumable(error: unknown): InterruptedError {
  const what = error instanceof Error ? error.message : String(error);
  return new InterruptedError(what.startsWith('Interrupted') ? what : `Interrupted: ${what}`, {
    hint: 'Run the same command again to finish: what is already in the registry is kept and not duplicated.',
    cause: error,
  });
}

function report(output: Output, doc: ReturnType<typeof publishDocument>): void {
  if (output.json) output.resultJson(doc);
  else renderPublish(output, doc);
}
