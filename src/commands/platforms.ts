/** `provider platforms list <version>` and `platforms show <version> <os>_<arch>`. */
import { getPlatform, listPlatforms } from '../registry/providerPlatforms.js';
import type { PlatformResource } from '../terraform/api.js';
import { ApiError } from '../errors.js';
import { printFacts, printTable } from '../ui/table.js';
import {
  isNotFound,
  openVersion,
  parsePlatformArgument,
  versionNotFound,
  type ProviderSession,
  type VersionArgument,
} from './manage/context.js';
import { platformView, providerView, respond, sortPlatforms, yesNo } from './manage/views.js';
import { platformName } from '../terraform/names.js';
import type { SessionCore } from './session.js';

/** Lists every platform of a version (all pages) with filename, shasum and whether the binary is uploaded. */
export const runPlatformsList: SessionCore<VersionArgument> = async (context, session, options) => {
  const { output } = context;
  const { provider, version } = await openVersion(context, session, options.version);
  const platforms = sortPlatforms(await readPlatforms(provider, version)).map(platformView);
  return respond(output, { provider: providerView(provider), version, platforms }, () => {
    if (platforms.length === 0) {
      output.info(`${provider.source} ${version} has no platforms yet; provider publish creates them.`);
      return;
    }
    printTable(
      output,
      ['PLATFORM', 'FILENAME', 'SHASUM', 'UPLOADED', 'ID'],
      platforms.map((p) => [`${p.os}_${p.arch}`, p.filename, p.shasum, yesNo(p.binaryUploaded), p.id]),
    );
  });
};

/** What `platforms show` is asked to do: its `<version>` and `<platform>` arguments. */
export interface PlatformsShowOptions extends VersionArgument {
  platform: string | undefined;
}

/** Shows one platform of a version. */
export const runPlatformsShow: SessionCore<PlatformsShowOptions> = async (context, session, options) => {
  const { output } = context;
  const platform = () => parsePlatformArgument(options.platform ?? '');
  const { provider, version, more: wanted } = await openVersion(context, session, options.version, platform);
  const found = await getPlatform(provider.client, provider.address, version, wanted.os, wanted.arch);
  if (found === undefined) {
    const there = (await readPlatforms(provider, version)).map(
      (p) => `${p.attributes.os}_${p.attributes.arch}`,
    );
    throw new ApiError(
      `Platform ${platformName(wanted)} of ${provider.address.name} ${version} is not on ${provider.hostname}`,
      {
        status: 404,
        hint:
          there.length === 0
            ? `Version ${version} has no platforms yet; provider publish creates them.`
            : `Version ${version} has ${there.sort().join(', ')}.`,
        details: { version, platform: platformName(wanted), platforms: there },
      },
    );
  }
  const view = platformView(found);
  return respond(output, { provider: providerView(provider), version, platform: view }, () =>
    printFacts(output, [
      ['source', provider.source],
      ['version', version],
      ['platform', `${view.os}_${view.arch}`],
      ['id', view.id],
      ['filename', view.filename],
      ['shasum', view.shasum],
      ['uploaded', view.binaryUploaded ? 'yes' : 'no: run provider publish again to upload it'],
    ]),
  );
};

/** The platforms of a version; a 404 names the version. */
async function readPlatforms(provider: ProviderSession, version: string): Promise<PlatformResource[]> {
  try {
    return await listPlatforms(provider.client, provider.address, version);
  } catch (error) {
    throw isNotFound(error) ? versionNotFound(provider, version) : error;
  }
}
