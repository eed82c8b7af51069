/**
 * Terraform's two checksum checks, replayed byte for byte (`package_authentication.go`): the served
 * SHA256SUMS must hold a line whose second field is exactly the platform's `filename`, with the platform's
 * `shasum`; and a downloaded archive must hash to that `shasum`. Each failure carries Terraform's own words.
 */

/** One thing `terraform init` would reject, in our words and in Terraform's. */
export interface ConsumerProblem {
  /** What it is about: `linux_amd64`, `SHA256SUMS.sig`, … */
  subject: string;
  message: string;
  /** The error text `terraform init` prints for it, when it has one. */
  terraform: string | null;
  hint: string;
}

/** A platform as the registry serves it. */
export interface ServedPlatform {
  os: string;
  arch: string;
  filename: string;
  shasum: string;
}

const HEX64 = /^[0-9a-fA-F]{64}$/;
/** Go's `unicode.IsSpace`, which `bytes.Fields` splits on (JavaScript's `\s` also takes U+FEFF). */
const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;
const REPUBLISH =
  'Delete the version (provider delete <version>) and publish it again from the release directory, so the platforms match the signed SHA256SUMS.';

/**
 * The `zh:` hashes `terraform init` records from a signed SHA256SUMS (`signatureAuthentication.AcceptableHashes`
 * in hashicorp/terraform's internal/getproviders/package_authentication.go): one for every line, whatever file it
 * names, and none at all when any non-empty line has fewer than two fields or a first field that is not 64 hex.
 */
export function acceptableHashes(document: Uint8Array): string[] {
  const hashes: string[] = [];
  for (const line of Buffer.from(document).toString('utf8').split('\n')) {
    const parts = line.split(GO_SPACE).filter((part) => part !== '');
    if (parts.length === 0) continue;
    // As Terraform: a line of one field spoils the document; more than two fields is a name with spaces.
    if (parts.length < 2 || !HEX64.test(parts[0]!)) return [];
    hashes.push(`zh:${parts[0]!.toLowerCase()}`);
  }
  return hashes;
}

/** The first hash listed for `filename`, found as Terraform finds it (whitespace-separated fields, exact bytes). */
export function listedHash(document: Uint8Array, filename: string): string | undefined {
  const wanted = Buffer.from(filename, 'utf8');
  for (const line of Buffer.from(document).toString('utf8').split('\n')) {
    const parts = line.split(GO_SPACE).filter((part) => part !== '');
    if (parts.length > 1 && Buffer.from(parts[1]!, 'utf8').equals(wanted)) return parts[0];
  }
  return undefined;
}

/** Terraform's "matching checksum" check for one platform; undefined when it passes. */
export function matchingChecksumProblem(
  document: Uint8Array,
  platform: ServedPlatform,
): ConsumerProblem | undefined {
  const subject = `${platform.os}_${platform.arch}`;
  if (!HEX64.test(platform.shasum)) {
    return {
      subject,
      message: `the registry's shasum "${platform.shasum}" is not 64 hexadecimal digits`,
      terraform: null,
      hint: REPUBLISH,
    };
  }
  const listed = listedHash(document, platform.filename);
  if (listed === undefined) {
    return {
      subject,
      message: `SHA256SUMS has no line for "${platform.filename}", the filename the registry serves for this platform`,
      terraform: `checksum list has no SHA-256 hash for ${goQuote(platform.filename)}`,
      hint: REPUBLISH,
    };
  }
  if (!HEX64.test(listed)) {
    return {
      subject,
      message: `SHA256SUMS lists "${listed}" for "${platform.filename}", which is not a SHA-256 hash`,
      terraform: `checksum list has invalid SHA256 hash ${goQuote(listed)}: …`,
      hint: REPUBLISH,
    };
  }
  if (listed.toLowerCase() !== platform.shasum.toLowerCase()) {
    return {
      subject,
      message: `SHA256SUMS lists ${listed.toLowerCase()} for "${platform.filename}", but the registry's shasum for the platform is ${platform.shasum.toLowerCase()}`,
      terraform: `checksum list has unexpected SHA-256 hash ${listed.toLowerCase()} (expected ${platform.shasum.toLowerCase()})`,
      hint: REPUBLISH,
    };
  }
  return undefined;
}

/** Terraform's "archive checksum" check for a downloaded zip; undefined when it passes. */
export function archiveChecksumProblem(
  platform: ServedPlatform,
  gotSha256: string,
): ConsumerProblem | undefined {
  const want = platform.shasum.toLowerCase();
  if (gotSha256 === want) return undefined;
  return {
    subject: `${platform.os}_${platform.arch}`,
    message: `the stored archive "${platform.filename}" hashes to ${gotSha256}, not to the registry's shasum ${want}`,
    terraform: `archive has incorrect checksum zh:${gotSha256} (expected zh:${want})`,
    hint: 'The stored zip is not the one that was signed: delete the platform (provider delete <version> --platform <os>_<arch>) and publish again.',
  };
}

/** Go's `%q` for the plain file names found here: a double-quoted string with `"` and `\` escaped. */
function goQuote(text: string): string {
  return JSON.stringify(text);
}
