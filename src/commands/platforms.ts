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
  type ManageInput,
  type ProviderContext,
} from '../manage/context.js';
import { platformView, providerView, sortPlatforms, yesNo } from '../manage/views.js';
import { platformName } from '../terraform.js';

/** Lists every platform of a version (all pages) with filename, shasum and whether the binary is uploaded. */
export async function runPlatformsList(
  input: ManageInput & { version: string | undefined },
): Promise<number> {
  const { output } = input;
  const version = parseVersionArgument(input.version);
  const context = await openProvider(input);
  const platforms = sortPlatforms(await readPlatforms(context, version)).map(platformView);
  if (output.json) {
    output.resultJson({ ok: true, provider: providerView(context), version, platforms });
    return 0;
  }
  if (platforms.length === 0) {
    output.info(`${context.source} ${version} has no platforms yet; provider publish creates them.`);
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
  input: ManageInput & { version: string | undefined; platform: string | undefined },
): Promise<number> {
  const { output } = input;
  const version = parseVersionArgument(input.version);
  const wanted = parsePlatformArgument(input.platform ?? '');
  const context = await openProvider(input);
  const found = await getPlatform(context.client, context.address, version, wanted.os, wanted.arch);
  if (found === undefined) {
    const there = (await readPlatforms(context, version)).map(
      (p) => `${p.attributes.os}_${p.attributes.arch}`,
    );
    throw new ApiError(
      `Platform ${platformName(wanted)} of ${context.address.name} ${version} is not on ${context.hostname}`,
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
    output.resultJson({ ok: true, provider: providerView(context), version, platform: view });
    return 0;
  }
  printFacts(output, [
    ['source', context.source],
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
async function readPlatforms(context: ProviderContext, version: string): Promise<PlatformResource[]> {
  try {
    return await listPlatforms(context.client, context.address, version);
  } catch (error) {
    throw isNotFound(error) ? versionNotFound(context, version) : error;
  }
}
