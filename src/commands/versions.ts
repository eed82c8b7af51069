/** `provider versions list` and `versions show <version>`: every version with the state of its files. */
import { mapPool } from '../consumer/report.js';
import { listPlatforms } from '../registry/providerPlatforms.js';
import { getVersion, listVersions } from '../registry/versions.js';
import type { PlatformResource, VersionResource } from '../registry/types.js';
import { printFacts, printTable } from '../ui/table.js';
import {
  isNotFound,
  openProvider,
  parseVersionArgument,
  providerNotFound,
  versionNotFound,
  type ManageInput,
} from '../manage/context.js';
import {
  compareVersionsDescending,
  platformView,
  providerView,
  sortPlatforms,
  versionView,
  yesNo,
} from '../manage/views.js';

/** Platform lists read at once when listing versions (one request per version that has platforms). */
const READ_CONCURRENCY = 8;

/** Lists every version (all pages), newest first, with protocols, key id, files complete and platforms. */
export async function runVersionsList(input: ManageInput): Promise<number> {
  const { output } = input;
  const context = await openProvider(input);
  const { client, address } = context;
  let versions: VersionResource[];
  try {
    versions = await listVersions(client, address);
  } catch (error) {
    throw isNotFound(error) ? providerNotFound(context, error) : error;
  }
  versions.sort((x, y) => compareVersionsDescending(x.attributes.version, y.attributes.version));
  // A version whose relationships name no platform has none: no request needed for it.
  const platforms = await mapPool(versions, READ_CONCURRENCY, (v) =>
    v.relationships?.platforms?.data?.length === 0
      ? Promise.resolve<PlatformResource[]>([])
      : listPlatforms(client, address, v.attributes.version),
  );
  const views = versions.map((v, i) => versionView(v, platforms[i] ?? []));
  if (output.json) {
    output.resultJson({ ok: true, provider: providerView(context), versions: views });
    return 0;
  }
  if (views.length === 0) {
    output.info(`${context.source} has no versions yet; publish one with provider publish <dir>.`);
    return 0;
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
  return 0;
}

/** Shows one version: its attributes and whether SHA256SUMS, its signature and each binary are uploaded. */
export async function runVersionsShow(input: ManageInput & { version: string | undefined }): Promise<number> {
  const { output } = input;
  const wanted = parseVersionArgument(input.version);
  const context = await openProvider(input);
  const version = await getVersion(context.client, context.address, wanted);
  if (version === undefined) throw versionNotFound(context, wanted);
  const platforms = sortPlatforms(await listPlatforms(context.client, context.address, wanted));
  const view = versionView(version, platforms);
  if (output.json) {
    output.resultJson({
      ok: true,
      provider: providerView(context),
      version: view,
      platforms: platforms.map(platformView),
    });
    return 0;
  }
  const state = view.complete
    ? 'complete: terraform init can install it'
    : 'incomplete: run provider publish again to upload what is missing';
  printFacts(output, [
    ['source', context.source],
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
      ...platforms
        .map(platformView)
        .map((p) => [p.filename, `${p.os}_${p.arch}`, yesNo(p.binaryUploaded), p.shasum]),
    ],
  );
  return 0;
}
