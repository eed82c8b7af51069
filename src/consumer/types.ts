/** The consumer check's input and report (src/consumer/check.ts), shared by its parts. */
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';
import type { Output } from '../ui/output.js';
import type { Progress } from '../ui/progress.js';
import type { ConsumerProblem } from './checksums.js';
import type { PackageVerdict } from './packages.js';
import type { SignatureVerdict } from './signature.js';

/** What the check needs: the client, the provider, the version, the sink. */
export interface ConsumerCheckInput {
  client: RegistryClient;
  address: ProviderAddress;
  version: string;
  output: Output;
  /** Also download every zip and hash it (streamed). */
  download?: boolean;
  signal?: AbortSignal;
  /** The clock used to judge key expiry (default: now). */
  now?: () => Date;
  /** Called as each archive has been downloaded and hashed (for progress lines); `problem` when it mismatched. */
  onArchive?: (platform: ConsumerPlatformReport, problem: ConsumerProblem | undefined) => void;
  /**
   * With `download`: where the downloads are shown (one batch for the version, a transfer per zip with its bytes);
   * the caller stops it.
   */
  progress?: Pick<Progress, 'downloads' | 'transfer'>;
  /** Archives downloaded at once with `download` (default 4). */
  concurrency?: number;
  /** First backoff of download retries, in ms (default 300; publish passes its PROVIDER_RETRY_DELAY). */
  retryDelayMs?: number;
  /**
   * Also read the registry protocol's download responses and check the lock hashes they serve (`packages`);
   * with `download`, compute each zip's `h1:` too: from the one download where the link answers byte ranges, else
   * from the zip streamed to a temporary file under `tmpDir`.
   */
  lockHashes?: boolean;
  /**
   * With `lockHashes` and `download`: whether each host's download links answer ranges, as found out so far. Checks
   * of one run share it, so that each host is asked once (by one Range request, left unread when answered whole).
   */
  ranges?: Map<string, Promise<boolean>>;
  /**
   * With `lockHashes` and `download`: the `h1:` of each zip (by file name) already computed for the SHA256SUMS whose
   * SHA-256 is given (a cache), or undefined. When it gives one for every platform, the check is made without
   * downloads (signature, every filename and shasum against the signed SHA256SUMS) and reports those.
   */
  knownH1?: (sums: string) => Promise<Record<string, string> | undefined>;
  /** Where downloaded zips are hashed with `lockHashes` and `download` (default: the system's). */
  tmpDir?: string;
  /**
   * The version and its platforms, as just read by the caller (publish's wait for the uploaded flags ends with
   * the same two reads): the check starts from them instead of reading them again.
   */
  read?: { version: VersionResource; platforms: PlatformResource[] };
}

/** One platform as checked. */
export interface ConsumerPlatformReport {
  os: string;
  arch: string;
  filename: string;
  shasum: string;
  /** `verified`: downloaded and hashed to `shasum`; `listed`: only matched against SHA256SUMS. */
  archive: 'verified' | 'listed';
  /** Bytes downloaded, when downloaded. */
  bytes: number | null;
  /**
   * The lock hashes this check vouches for, sorted: `zh:` from the signed SHA256SUMS, and with `download` and
   * `lockHashes` the `h1:` computed from the downloaded zip.
   */
  hashes: string[];
  /** With `lockHashes`: what the registry's `packages` serves for the platform (all checked); null: not served. */
  packages?: PackageVerdict | null;
}

/** The outcome of a passing check, as plain data (safe to print as JSON: no links). */
export interface ConsumerCheckReport {
  provider: { hostname: string; organization: string; namespace: string; name: string };
  version: string;
  protocols: string[];
  keyId: string;
  signature: SignatureVerdict;
  /** `zh`: what terraform init records from the signed SHA256SUMS (a `zh:` for every line). */
  /** `sha256`: the hex SHA-256 of the signed SHA256SUMS itself (what a cache of the version's hashes is keyed by). */
  shasums: { bytes: number; lines: number; zh: string[]; sha256: string };
  platforms: ConsumerPlatformReport[];
  downloaded: boolean;
  /** True when every `h1:` came from `knownH1` (nothing was downloaded). */
  h1Known?: boolean;
  /** With `lockHashes`: whether the registry serves lock hashes (`packages`) in its download responses. */
  packages?: 'served' | 'not served';
}
