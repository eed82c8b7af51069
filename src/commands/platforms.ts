/** `provider platforms list <version>` and `platforms show <version> <os>_<arch>`. */
import { getPlatform, listPlatforms } from '../registry/providerPlatforms.js';
import type { PlatformResource } from '../registry/types.js';
import { ApiError } from '../errors.js';
import { printFacts, printTable } from '../ui/table.js';
import {
  isNotFound,
  openProvider,
  parsePlatformArgument,
  parseVersionArgument,
  versionNotFound,
  type ProviderSession,
} from '../manage/context.js';
import { platformView, providerView, sortPlatforms, yesNo } from '../manage/views.js';
import { platformName } from '../terraform.js';
import type { RunContext } from './context.js';
import type { Session } from './session.js';

/** Lists every platform of a version (all pages) with filename, shasum and whether the binary is uploaded. */
export async function runPlatformsList(
  context: RunContext,
  session: Session,
  options: { version: string | undefined },
): Promise<number> {
  const { output } = context;
  const version = parseVersionArgument(options.version);
  const provider = await openProvider(context, session);
  const platforms = sortPlatforms(await readPlatforms(provider, version)).map(platformView);
  if (output.json) {
    output.resultJson({ ok: true, provider: providerView(provider), version, platforms });
    return 0;
  }
  if (platforms.length === 0) {
    output.info(`${provider.source} ${version} has no platforms yet; provider publish creates them.`);
    return 0;
  }
  printTable(
    output,
    ['PLATFORM', 'FILENAME', 'SHASUM', 'UPLOADED', 'ID'],
    platforms.map((p) => [`${p.os}_${p.arch}`, p.filename, p.shasum, yesNo(p.binaryUploaded), p.id]),
  );
  return 0;
}

/** Shows one platform of a version. */
export async function runPlatformsShow(
  context: RunContext,
  session: Session,
  options: { version: string | undefined; platform: string | undefined },
): Promise<number> {
  const { output } = context;
  const version = parseVersionArgument(options.version);
  const wanted = parsePlatformArgument(options.platform ?? '');
  const provider = await openProvider(context, session);
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
  if (output.json) {
    output.resultJson({ ok: true, provider: providerView(provider), version, platform: view });
    return 0;
  }
  printFacts(output, [
    ['source', provider.source],
    ['version', version],
    ['platform', `${view.os}_${view.arch}`],
    ['id', view.id],
    ['filename', view.filename],
    ['shasum', view.shasum],
    ['uploaded', view.binaryUploaded ? 'yes' : 'no: run provider publish again to upload it'],
  ]);
  return 0;
}

/** The platforms of a version; a 404 names the version. */
async function readPlatforms(provider: ProviderSession, version: string): Promise<PlatformResource[]> {
  try {
    return await listPlatforms(provider.client, provider.address, version);
  } catch (error) {
    throw isNotFound(error) ? versionNotFound(provider, version) : error;
  }
}
