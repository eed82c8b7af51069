/**
 * The registry's side of a release, read by `provider publish` while the release is verified (reads only): see
 * `EarlyReads`.
 */
import type { Output } from '../ui/output.js';
import type { RemoteRelease } from '../publish/remote.js';
import type { RemoteState } from '../publish/types.js';
import type { SignerInfo, UploadableRelease } from '../release/types.js';
import type { ReleaseIdentity } from '../release/stages.js';
import { providerAddress, type RegistrySession, type Session } from './session.js';
import type * as NetworkModule from '../publish/network.js';

/** The steps that talk to the registry (src/publish/network.ts), loaded on demand. */
export type NetworkSteps = typeof NetworkModule;

/** What the registry reads need besides the session. */
export interface ReadOptions {
  output: Output;
  signal: AbortSignal;
  retryDelayMs: number;
  readTags: boolean;
}

/**
 * The registry's side of the release, read while its files are hashed: the provider, version, platforms and
 * small files once the release's name and version are known, the signing key once the signature names it.
 * Reads only, on a client of their own that `drop()` stops: a release that does not verify leaves no request
 * running, and its own error is the one reported (a failed read is thrown by `result`, after verification).
 */
export class EarlyReads {
  private readonly stop = new AbortController();
  private registry: Promise<RegistrySession> | undefined;
  private release: Promise<RemoteRelease> | undefined;
  private key: Promise<boolean> | undefined;

  constructor(
    private readonly session: Session,
    private readonly loadNetwork: () => Promise<NetworkSteps>,
    private readonly options: ReadOptions,
  ) {}

  /** The registry session, its client stopped by `drop()` too. */
  private reader() {
    this.registry ??= this.session.registry().then((registry) => ({
      ...registry,
      client: registry.client.withSignal(this.stop.signal),
    }));
    return this.registry;
  }

  /** The files are being hashed: reads the provider, version, platforms and small files. */
  start(identity: ReleaseIdentity): void {
    this.release = Promise.all([this.loadNetwork(), this.reader()]).then(
      ([{ readRemoteRelease }, registry]) =>
        readRemoteRelease({
          ...this.options,
          // The small files' downloads (through their links, not the client) stop with the reads too.
          signal: AbortSignal.any([this.options.signal, this.stop.signal]),
          client: registry.client,
          address: providerAddress(registry, identity.name),
          release: identity,
        }),
    );
    this.release.catch(() => undefined);
  }

  /** The signature verified: reads whether its key is registered. */
  signed(signer: SignerInfo): void {
    this.key = Promise.all([this.loadNetwork(), this.reader()]).then(([{ readKeyRegistered }, registry]) =>
      readKeyRegistered(registry.client, registry.namespace, signer),
    );
    this.key.catch(() => undefined);
  }

  /** Stops the reads still running: the release did not verify, a read failed, or the run is over. */
  drop(): void {
    this.stop.abort();
  }

  /**
   * The registry's side of the verified release, judged against it. `verifyWhileReading` starts both reads
   * before the release's last stage, so both are under way once it is verified.
   */
  async result(release: UploadableRelease): Promise<RemoteState> {
    if (this.release === undefined || this.key === undefined)
      throw new Error('the registry reads were not started: the registry was not read');
    try {
      const [{ judgeRemote }, read, keyRegistered] = await Promise.all([
        this.loadNetwork(),
        this.release,
        this.key,
      ]);
      return judgeRemote(read, keyRegistered, release);
    } catch (error) {
      // One read failed: the others (the platforms' pages, the small files' downloads) are not waited for.
      this.drop();
      throw error;
    }
  }
}
