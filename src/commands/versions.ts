/**
 * `provider versions list` and `versions show <version>`: every version with the state of its files and its
 * tags (HCP Terraform's version tags; `null` where the registry reports none: no tag-bindings relationship).
 */
import { mapPool } from '../pool.js';
import { listPlatforms } from '../registry/providerPlatforms.js';
import { listVersionTags } from '../registry/tagBindings.js';
import { formatTags, matchesTagFilters, parseTagFilter, type Tag, type TagFilter } from '../registry/tags.js';
import { getVersion, listVersionEntries, type VersionEntry } from '../registry/versions.js';
import type { RegistryClient } from '../registry/http.js';
import type { ProviderAddress } from '../registry/paths.js';
import type { PlatformResource, VersionResource } from '../terraform/api.js';
import { printFacts, printTable } from '../ui/table.js';
import {
  isNotFound,
  openProvider,
  openVersion,
  providerNotFound,
  versionNotFound,
  type VersionArgument,
} from './manage/context.js';
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
} from './manage/views.js';
import type { Output } from '../ui/output.js';
import type { SessionCore } from './session.js';

/** Platform lists read at once when listing versions (one request per version that has platforms). */
const READ_CONCURRENCY = 8;

/** The flags of `versions list`. */
export interface VersionsListOptions {
  /** `--tag key=value` or `--tag key`, repeatable: versions carrying any of them. */
  tag?: string[] | undefined;
}

/**
 * Lists every version (all pages), newest first, with protocols, key id, files complete, platforms and tags;
 * with `--tag`, only the versions carrying one of the tags (asked with `filter[tagged]`, checked again here).
 */
export const runVersionsList: SessionCore<VersionsListOptions> = async (context, session, options) => {
  const { output } = context;
  const filters: TagFilter[] = (options.tag ?? []).map(parseTagFilter);
  const provider = await openProvider(context, session);
  const { client, address } = provider;
  let entries: VersionEntry[];
  try {
    entries = await listVersionEntries(client, address, filters);
  } catch (error) {
    throw isNotFound(error) ? providerNotFound(provider, error) : error;
  }
  const read = await mapPool(entries, READ_CONCURRENCY, (entry) => readListed(client, address, entry));
  const rows = read
    .filter((r): r is ListedVersion => r !== undefined)
    // A registry that ignores the filter answers every version: the tags read decide.
    .filter((r) => filters.length === 0 || matchesTagFilters(r.tags ?? [], filters))
    .sort((x, y) => compareVersionsDescending(x.version.attributes.version, y.version.attributes.version));
  const views = rows.map((r) => versionView(r.version, r.platforms, r.tags));
  const filtered = filters.length === 0 ? {} : { filter: filters };
  return respond(output, { provider: providerView(provider), ...filtered, versions: views }, () => {
    if (views.length === 0) {
      output.info(
        filters.length === 0
          ? `${provider.source} has no versions yet; publish one with provider publish <dir>.`
          : `${provider.source} has no version tagged ${filters.map((f) => (f.value === undefined ? f.key : `${f.key}=${f.value}`)).join(' or ')}.`,
      );
      return;
    }
    printTable(
      output,
      ['VERSION', 'PROTOCOLS', 'KEY ID', 'FILES', 'PLATFORMS', 'TAGS', 'CREATED'],
      views.map((v) => [
        v.version,
        v.protocols.join(',') || '-',
        v.keyId,
        v.files,
        v.platforms.join(',') || '-',
        v.tags === null ? '-' : formatTags(v.tags, ','),
        v.createdAt,
      ]),
    );
  });
};

/** A listed version with what the table shows of it. */
interface ListedVersion {
  version: VersionResource;
  platforms: PlatformResource[];
  tags: Tag[] | null;
}

/**
 * What the table needs of one listed version: the whole resource (read when the list gave only the version),
 * its platforms and its tags (read when the list did not carry them). Undefined when it is gone meanwhile.
 */
async function readListed(
  client: RegistryClient,
  address: ProviderAddress,
  entry: VersionEntry,
): Promise<ListedVersion | undefined> {
  const version = entry.resource ?? (await getVersion(client, address, entry.version));
  if (version === undefined) return undefined;
  // A version whose relationships name no platform has none: no request needed for it.
  const [platforms, tags] = await Promise.all([
    version.relationships?.platforms?.data?.length === 0
      ? Promise.resolve<PlatformResource[]>([])
      : listPlatforms(client, address, version.attributes.version),
    entry.tags !== undefined ? Promise.resolve(entry.tags) : readTags(client, version),
  ]);
  return { version, platforms, tags };
}

/** The version's tags, or null when its document names no tag bindings (a registry without version tags). */
async function readTags(client: RegistryClient, version: VersionResource): Promise<Tag[] | null> {
  if (version.relationships['tag-bindings'] === undefined) return null;
  return listVersionTags(client, version.id);
}

/** Shows one version: its attributes and whether SHA256SUMS, its signature and each binary are uploaded. */
export const runVersionsShow: SessionCore<VersionArgument> = async (context, session, options) => {
  const { output } = context;
  const { provider, version: wanted } = await openVersion(context, session, options.version);
  const version = await getVersion(provider.client, provider.address, wanted);
  if (version === undefined) throw versionNotFound(provider, wanted);
  const [platforms, tags] = await Promise.all([
    listPlatforms(provider.client, provider.address, wanted).then(sortPlatforms),
    readTags(provider.client, version),
  ]);
  const view = versionView(version, platforms, tags);
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
    ['tags', view.tags === null ? '(not reported by this registry)' : formatTags(view.tags)],
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
