/**
 * Each platform archive must be a zip Terraform can unpack, holding at its top level an executable whose
 * name starts with `terraform-provider-<name>` (Terraform looks for exactly that after unpacking). Only the
 * central directory, up to the executable, and the executable's local header are read, and the number of entries
 * is capped, so this is cheap whatever the size of the file or its number of entries.
 */
import type { Entry, ZipFile } from 'yauzl';
import { VerificationError, shorten } from '../errors.js';
import { FILE_PREFIX } from './filenames.js';
import { isRemoteReadError, openZip, type RemoteZip } from './remoteZip.js';

/** What the zip check found. */
export interface ZipCheck {
  executable: string;
  warnings: string[];
}

const UNIX = 3;
/**
 * The most entries a platform archive may declare. goreleaser puts the binary and, by default, the license,
 * readme and changelog files in it (1 to 4 entries); 1 000 is some 250 times that, and walking them all costs
 * about 0.3 s. Terraform unpacks every entry at `terraform init`, so a zip of hundreds of thousands of entries is
 * no provider package anyway (250 000 of them kept this check busy 50 to 80 s, at 280 MB, before the cap).
 */
export const MAX_ZIP_ENTRIES = 1000;
const REBUILD = 'Rebuild the archive with goreleaser (archives: formats: [zip]) and regenerate SHA256SUMS.';

/** Checks one platform archive; throws a VerificationError naming the file. */
export async function checkZip(
  path: string,
  filename: string,
  expect: { name: string; os: string },
  remote?: RemoteZip,
): Promise<ZipCheck> {
  const prefix = `${FILE_PREFIX}${expect.name}`;
  const fail = (problem: string, hint = REBUILD): VerificationError =>
    new VerificationError(`${filename} ${problem}`, { hint, details: { file: filename } });

  let zip: ZipFile;
  try {
    zip = await openZip(path, { lazyEntries: true, autoClose: false, strictFileNames: false }, remote);
  } catch (error) {
    if (isRemoteReadError(error)) throw error;
    throw fail(`is not a readable zip archive (${(error as Error).message})`);
  }
  try {
    // The end record gives the count before any entry is read: a zip declaring more than the cap is refused
    // without walking it (yauzl reads exactly that many central directory records).
    if (zip.entryCount > MAX_ZIP_ENTRIES) {
      throw new VerificationError(
        `${filename} holds ${zip.entryCount} entries; a provider archive holds a handful (the provider binary, perhaps a license and a readme), and at most ${MAX_ZIP_ENTRIES} are read`,
        {
          hint: `Archive only the provider binary and a few documents (goreleaser's archives.files). ${REBUILD}`,
          details: { file: filename, entries: zip.entryCount, limit: MAX_ZIP_ENTRIES },
        },
      );
    }
    const walk = await findExecutable(zip, prefix).catch((error: unknown) => {
      if (isRemoteReadError(error)) throw error;
      throw fail(`is a damaged zip archive (${(error as Error).message})`);
    });
    const { executable } = walk;
    if (walk.files === 0) throw fail('is an empty zip archive');
    if (executable === undefined) {
      const { nested, firstNames, files } = walk;
      throw fail(
        nested !== undefined
          ? `has ${shorten(nested)} in a folder; Terraform looks for ${prefix}* at the top level of the archive`
          : `holds no executable named ${prefix}* (found: ${firstNames.join(', ')}${files > firstNames.length ? ', …' : ''})`,
        `Terraform refuses to install a package without ${prefix}* at its top level. Check the provider name and goreleaser's builds.binary ({{ .ProjectName }}_v{{ .Version }}). ${REBUILD}`,
      );
    }
    if (executable.isEncrypted()) throw fail(`has an encrypted entry ${shorten(executable.fileName)}`);
    if (!executable.canDecodeFileData()) {
      throw fail(
        `uses compression method ${executable.compressionMethod} for ${shorten(executable.fileName)}, which Terraform cannot unpack`,
      );
    }
    try {
      await zip.readLocalFileHeaderPromise(executable, { minimal: true });
    } catch (error) {
      if (isRemoteReadError(error)) throw error;
      throw fail(`is a damaged zip archive (${(error as Error).message})`);
    }
    return { executable: executable.fileName, warnings: checkMode(executable, filename, expect.os) };
  } finally {
    zip.close();
  }
}

/** The unix mode, where the zip records one, must make the file executable; Windows needs `.exe` instead. */
function checkMode(entry: Entry, filename: string, os: string): string[] {
  if (os === 'windows') {
    return entry.fileName.toLowerCase().endsWith('.exe')
      ? []
      : [`${filename}: ${shorten(entry.fileName)} has no .exe extension; Windows may not run it`];
  }
  const mode = (entry.externalFileAttributes >>> 16) & 0o7777;
  if (entry.versionMadeBy >> 8 === UNIX && mode !== 0 && (mode & 0o111) === 0) {
    throw new VerificationError(
      `${filename}: ${shorten(entry.fileName)} is not executable (mode ${mode.toString(8).padStart(4, '0')})`,
      {
        hint: `Terraform cannot start a provider without the executable bit. chmod +x the binary before zipping (goreleaser does). ${REBUILD}`,
        details: { file: filename, entry: shorten(entry.fileName), mode: mode.toString(8) },
      },
    );
  }
  return [];
}

/** What walking the central directory found, up to the executable (then it stops). */
interface Walk {
  /** The first top-level entry named `prefix…`, the one Terraform would run. */
  executable?: Entry;
  /** Files (not folders) seen. */
  files: number;
  /** The first five file names seen, shortened, for the message when there is no executable. */
  firstNames: string[];
  /** A file named `prefix…` inside a folder, when there is no executable at the top level. */
  nested?: string;
}

/** Reads entries one at a time (yauzl's lazy mode) and stops at the first top-level `prefix…` file. */
async function findExecutable(zip: ZipFile, prefix: string): Promise<Walk> {
  const walk: Walk = { files: 0, firstNames: [] };
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    walk.files++;
    if (walk.firstNames.length < 5) walk.firstNames.push(shorten(entry.fileName, 80));
    if (!entry.fileName.includes('/') && entry.fileName.startsWith(prefix)) {
      walk.executable = entry;
      break;
    }
    if (walk.nested === undefined && baseName(entry.fileName).startsWith(prefix))
      walk.nested = entry.fileName;
  }
  return walk;
}

function baseName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}
