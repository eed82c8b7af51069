/** `provider versions list` and `versions show <version>`: every version with the state of its files. */
import { mapPool } from '../consumer/report.js';
import { listPlatforms } from '../registry/providerPlatforms.js';
import { getVersion, listVersions } from '../registry/versions.js';
import type { PlatformResource, VersionResource } from '../registry/types.js';
import { printFacts, printTable } from '../ui/table.js';
import {
  isNotFound,
  openProvider,
  openVersion,
  providerNotFound,
  versionNotFound,
  type VersionArgument,
} from '../manage/context.js';
import {
  compareVersionsDescending,
  platformView,
  providerView,
  respond,
  sortPlatforms,
  versionView,
  yesNo,
  type PlatformView,
  type VersionView,
} from '../manage/views.js';
import type { Output } from '../ui/output.js';
import type { SessionCore } from './session.js';

/** Platform lists read at once when listing versions (one request per version that has platforms). */
const READ_CONCURRENCY = 8;

/** Lists every version (all pages), newest first, with protocols, key id, files complete and platforms. */
export const runVersionsList: SessionCore<unknown> = async (context, session) => {
  const { output } = context;
  const provider = await openProvider(context, session);
  const { client, address } = provider;
  let versions: VersionResource[];
  try {
    versions = await listVersions(client, address);
  } catch (error) {
    throw isNotFound(error) ? providerNotFound(provider, error) : error;
  }
  versions.sort((x, y) => compareVersionsDescending(x.attributes.version, y.attributes.version));
  // A version whose relationships name no platform has none: no request needed for it.
  const platforms = await mapPool(versions, READ_CONCURRENCY, (v) =>
    v.relationships?.platforms?.data?.length === 0
      ? Promise.resolve<PlatformResource[]>([])
      : listPlatforms(client, address, v.attributes.version),
  );
  const views = versions.map((v, i) => versionView(v, platforms[i] ?? []));
  return respond(output, { provider: providerView(provider), versions: views }, () => {
    if (views.length === 0) {
      output.info(`${provider.source} has no versions yet; publish one with provider publish <dir>.`);
      return;
    }
    printTable(
      output,
      ['VERSION', 'PROTOCOLS', 'KEY ID', 'FILES', 'PLATFORMS', 'CREATED'],
      views.map((v) => [
        v.version,
        v.protocols.join(',') || '-',
        v.keyId,
        v.files,
        v.platforms.join(',') || '-',
        v.createdAt,
      ]),
    );
  });
};

/** Shows one version: its attributes and whether SHA256SUMS, its signature and each binary are uploaded. */
export const runVersionsShow: SessionCore<VersionArgument> = async (context, session, options) => {
  const { output } = context;
  const { provider, version: wanted } = await openVersion(context, session, options.version);
  const version = await getVersion(provider.client, provider.address, wanted);
  if (version === undefined) throw versionNotFound(provider, wanted);
  const platforms = sortPlatforms(await listPlatforms(provider.client, provider.address, wanted));
  const view = versionView(version, platforms);
  const facts = { provider: providerView(provider), version: view, platforms: platforms.map(platformView) };
  return respond(output, facts, () => printVersion(output, provider.source, view, facts.platforms));
};

/** A version's facts, then its files and whether each is uploaded. */
function printVersion(output: Output, source: string, view: VersionView, platforms: PlatformView[]): void {
  const state = view.complete
    ? 'complete: terraform init can install it'
    : 'incomplete: run provider publish again to upload what is missing';
  printFacts(output, [
    ['source', source],
    ['version', view.version],
    ['id', view.id],
    ['protocols', view.protocols.join(', ') || '(none)'],
    ['key id', view.keyId],
    ['created', view.createdAt],
    ['updated', view.updatedAt],
    ['files', `${view.files} (${state})`],
  ]);
  output.result('');
  printTable(
    output,
    ['FILE', 'PLATFORM', 'UPLOADED', 'SHA256'],
    [
      ['SHA256SUMS', '-', yesNo(view.shasumsUploaded), '-'],
      ['SHA256SUMS.sig', '-', yesNo(view.shasumsSigUploaded), '-'],
      ...platforms.map((p) => [p.filename, `${p.os}_${p.arch}`, yesNo(p.binaryUploaded), p.shasum]),
    ],
  );
}
