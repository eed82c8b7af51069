/**
 * What reading and verifying a release directory produces: plain data, so `verify` can print it, `publish`
 * can plan from it, and tests can compare it.
 */

/** One platform archive of the release, as listed in SHA256SUMS. */
export interface ReleasePlatform {
  os: string;
  arch: string;
  /** The bare file name, exactly as written in SHA256SUMS (the registry's `filename`). */
  filename: string;
  /** Absolute path on disk. */
  path: string;
  /** Lower-case hex SHA-256, checked against the file's bytes. */
  shasum: string;
  bytes: number;
  /** The executable inside the zip (`terraform-provider-<name>_v<version>`, `.exe` on Windows). */
  executable: string;
  /** The package's `h1:` lock hash (Go's dirhash over the zip's files), as `.terraform.lock.hcl` records it. */
  h1: string;
}

/** A platform of a release verified but whose `h1:` may still be to compute (`checkRelease`, src/release/stages.ts). */
export type UploadablePlatform = Omit<ReleasePlatform, 'h1'>;

/** A file of the release other than the platform archives. */
export interface ReleaseFile {
  filename: string;
  /** Absolute path on disk. */
  path: string;
  bytes: number;
}

/** Where the protocol versions came from. */
export type ProtocolsSource = 'flag' | 'config' | 'manifest';

/** Where the public key that checked the signature came from. */
/** `folder`: a key file beside the release (a mirrored folder); `origin`: the keys a mirror's origin serves. */
export type KeyOrigin = 'flag' | 'env' | 'config' | 'folder' | 'origin' | 'registry';

/** The key that made the signature, after every check passed. */
export interface SignerInfo {
  /** Long key id of the PRIMARY key (16 upper-case hex): the version's `key-id`. */
  keyId: string;
  /** Fingerprint of the primary key (40 upper-case hex). */
  fingerprint: string;
  /** Long key id of the (sub)key that actually signed; equals `keyId` unless a subkey signed. */
  signingKeyId: string;
  /** Fingerprint of the (sub)key that actually signed (40 upper-case hex); a policy may pin it. */
  signingFingerprint: string;
  /** The primary user id, e.g. `Jane Doe <jane@example.com>`. */
  userId: string;
  /** `RSA 3072`, `DSA 2048`. */
  algorithm: string;
  /** ISO date the signing key expires, or null when it never does. */
  expires: string | null;
  origin: KeyOrigin;
  /** Human description of the origin: `--key ./key.asc`, `PROVIDER_GPG_KEY`, `registry key 23 (acme)`. */
  originLabel: string;
  /**
   * The armored public key that verified the signature, registered by `publish`: the user's own armor block as
   * given (byte for byte) when it holds only this public key, else the signing key's public part armored anew.
   */
  armoredKey: string;
}

/** A verified release directory. */
export interface VerifiedRelease {
  /** Absolute path of the release directory. */
  dir: string;
  /** Provider name (`example` for `terraform-provider-example`). */
  name: string;
  /** Strict semver, without a leading `v`. */
  version: string;
  protocols: string[];
  protocolsSource: ProtocolsSource;
  shasums: ReleaseFile;
  /** The exact bytes of SHA256SUMS (what the signature covers and what gets uploaded). */
  shasumsBytes: Uint8Array;
  signature: ReleaseFile & { dearmored: boolean };
  /** The binary signature (converted in memory when `--dearmor-signature` was used). */
  signatureBytes: Uint8Array;
  manifest?: ReleaseFile;
  /** Sorted by os, then arch. */
  platforms: ReleasePlatform[];
  signer: SignerInfo;
  warnings: string[];
  /** goreleaser's artifacts.json, when the folder held one and it was checked against the files. */
  artifactsJson?: { file: string; archives: number };
}

/** A verified release whose platforms' `h1:` may still be to compute (`checkRelease`, src/release/stages.ts): what uploads need. */
export type UploadableRelease = Omit<VerifiedRelease, 'platforms'> & { platforms: UploadablePlatform[] };
