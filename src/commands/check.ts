/**
 * `provider check <version>`: the consumer check on its own, lock hashes included (what the registry protocol
 * serves in `packages`, when it does), rendered for people or as one JSON document.
 */
import { checkConsumerView, type ConsumerCheckReport } from '../consumer/check.js';
import { successMark } from '../ui/glyphs.js';
import type { Output } from '../ui/output.js';
import { printFacts, printTable } from '../ui/table.js';
import { openVersion, type VersionArgument } from './manage/context.js';
import { respond } from './manage/views.js';
import type { SessionCore } from './session.js';

/** Flags of `provider check`. */
export interface CheckFlags {
  download?: boolean;
}

/** What `provider check` is asked to do: the flags and the `<version>` argument. */
export interface CheckOptions extends CheckFlags, VersionArgument {}

/** Runs the check; exit 0 when terraform init would accept the version, else throws (exit 3). */
export const runCheck: SessionCore<CheckOptions> = async (context, session, options) => {
  const { output } = context;
  const { provider, version } = await openVersion(context, session, options.version);
  output.info(
    `Checking ${provider.source} ${version} as terraform init would${options.download === true ? ' (downloading every archive)' : ''}`,
  );
  const report = await checkConsumerView({
    client: provider.client,
    address: provider.address,
    version,
    output,
    download: options.download === true,
    signal: context.signal,
    now: context.now,
    lockHashes: true,
    tmpDir: context.tmpDir,
    onArchive: (p, problem) => {
      const h1 = p.hashes.find((h) => h.startsWith('h1:'));
      output.info(
        `  ${p.os}_${p.arch}: ${p.filename} (${p.bytes ?? 0} bytes) ${problem ? 'does NOT hash to its shasum' : `hashes to its shasum${h1 ? `, ${h1}` : ''}`}`,
      );
    },
  });
  return respond(output, { source: provider.source, ...report }, () =>
    printCheck(output, report, provider.source),
  );
};

/** A passing check, for people. */
function printCheck(output: Output, report: ConsumerCheckReport, source: string): void {
  const { signature } = report;
  const subkey = signature.signingKeyId === signature.keyId ? '' : ` (subkey ${signature.signingKeyId})`;
  const count = report.platforms.length;
  printFacts(output, [
    ['source', source],
    ['version', `${report.version} (protocols ${report.protocols.join(', ') || 'none'})`],
    [
      'signature',
      `good: SHA256SUMS signed by ${signature.keyId}${subkey}, registered key id ${signature.gpgKeyId} (${signature.userId})`,
    ],
    [
      'checksums',
      `SHA256SUMS lists all ${count} platform${count === 1 ? '' : 's'} under their filenames with their shasums`,
    ],
    [
      'archives',
      report.downloaded
        ? `all ${count} downloaded and hashed to their shasums`
        : 'not downloaded (--download also hashes every stored zip)',
    ],
    ['hashes', describeLockHashes(report)],
  ]);
  output.result('');
  printTable(
    output,
    ['PLATFORM', 'FILENAME', 'SHASUM', 'ARCHIVE'],
    report.platforms.map((p) => [
      `${p.os}_${p.arch}`,
      p.filename,
      p.shasum,
      p.archive === 'verified' ? `verified (${p.bytes ?? 0} bytes)` : 'listed',
    ]),
  );
  // On stderr, so that stdout stays the facts and the table; the mark is every command's success mark.
  output.info(`${successMark(output.color)} terraform init will accept ${source} ${report.version}`);
}

/** The lock hashes line: what the registry serves in `packages` and what was checked of it. */
function describeLockHashes(report: ConsumerCheckReport): string {
  const count = report.platforms.length;
  const h1 = report.downloaded ? ' and h1: computed from the downloads' : '';
  if (report.packages !== 'served') {
    return `lock hashes not served by the registry (no packages, as on HCP Terraform); zh: of all ${count} from the signed SHA256SUMS${h1} (--json lists them)`;
  }
  const served = report.platforms.filter((p) => p.packages).length;
  const checked = report.downloaded
    ? 'zh:, h1: and sizes match SHA256SUMS and the downloads'
    : 'zh: match SHA256SUMS (--download also checks h1: and sizes)';
  return `lock hashes served (packages) for ${served} of ${count} platform${count === 1 ? '' : 's'}: ${checked}`;
}
