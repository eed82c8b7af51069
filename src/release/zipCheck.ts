/**
 * Each platform archive must be a zip Terraform can unpack, holding at its top level an executable whose
 * name starts with `terraform-provider-<name>` (Terraform looks for exactly that after unpacking). Only the
 * central directory and the executable's local header are read, so this is cheap whatever the size.
 */
import type { Entry, ZipFile } from 'yauzl';
import { VerificationError } from '../errors.js';
import { FILE_PREFIX } from './filenames.js';
import { shorten } from './shorten.js';

/** What the zip check found. */
export interface ZipCheck {
  executable: string;
  warnings: string[];
}

const UNIX = 3;
const REBUILD = 'Rebuild the archive with goreleaser (archives: formats: [zip]) and regenerate SHA256SUMS.';

/** Checks one platform archive; throws a VerificationError naming the file. */
export async function checkZip(
  path: string,
  filename: string,
  expect: { name: string; os: string },
): Promise<ZipCheck> {
  const prefix = `${FILE_PREFIX}${expect.name}`;
  const fail = (problem: string, hint = REBUILD): VerificationError =>
    new VerificationError(`${filename} ${problem}`, { hint, details: { file: filename } });

  let zip: ZipFile;
  try {
    // Loaded on first use, like openpgp: verification starts hashing before the libraries are in.
    const yauzl = await import('yauzl');
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, strictFileNames: false });
  } catch (error) {
    throw fail(`is not a readable zip archive (${(error as Error).message})`);
  }
  try {
    const entries: Entry[] = [];
    try {
      for await (const entry of zip.eachEntry()) entries.push(entry);
    } catch (error) {
      throw fail(`is a damaged zip archive (${(error as Error).message})`);
    }
    const files = entries.filter((e) => !e.fileName.endsWith('/'));
    if (files.length === 0) throw fail('is an empty zip archive');
    const top = files.filter((e) => !e.fileName.includes('/') && e.fileName.startsWith(prefix));
    const executable = top[0];
    if (executable === undefined) {
      const nested = files.find((e) => baseName(e.fileName).startsWith(prefix));
      const found = files.slice(0, 5).map((e) => shorten(e.fileName, 80));
      throw fail(
        nested
          ? `has ${shorten(nested.fileName)} in a folder; Terraform looks for ${prefix}* at the top level of the archive`
          : `holds no executable named ${prefix}* (found: ${found.join(', ')}${files.length > 5 ? ', …' : ''})`,
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

function baseName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}
