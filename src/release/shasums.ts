/**
 * The strict SHA256SUMS reader. Terraform splits each line on whitespace and compares the second field with
 * the registry's `filename` byte for byte, so anything but `<64 lower-case hex>  <bare file name>` is refused
 * here, with the line number, rather than at `terraform init` on someone else's machine.
 */
import { VerificationError, shorten } from '../errors.js';

/** One line of SHA256SUMS. */
export interface ShasumEntry {
  /** 1-based line number. */
  line: number;
  /** 64 lower-case hex digits. */
  shasum: string;
  filename: string;
}

/** One thing wrong with one line. */
export interface ShasumProblem {
  line: number;
  problem: string;
}

const MAX_PROBLEMS = 20;
const REGENERATE =
  'Let goreleaser write it (checksum section), or run `sha256sum <files> > SHA256SUMS` in the release folder — then sign it again.';

/** Parses SHA256SUMS bytes; throws a VerificationError naming the file and the first bad line (all in details). */
export function parseShasums(bytes: Uint8Array, file: string): ShasumEntry[] {
  let text: string;
  try {
    // ignoreBOM keeps a byte order mark in the text, where parseLine refuses it: Terraform does not skip it.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new VerificationError(`${file} is not UTF-8 text`, { hint: REGENERATE, details: { file } });
  }
  if (text.trim() === '') {
    throw new VerificationError(`${file} is empty`, { hint: REGENERATE, details: { file } });
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();

  const entries: ShasumEntry[] = [];
  const problems: ShasumProblem[] = [];
  const seen = new Map<string, number>();
  lines.forEach((raw, index) => {
    const line = index + 1;
    const result = parseLine(raw);
    if (typeof result === 'string') {
      problems.push({ line, problem: result });
      return;
    }
    const first = seen.get(result.filename);
    if (first !== undefined) {
      problems.push({
        line,
        problem: `${shorten(result.filename)} is listed twice (first on line ${first})`,
      });
      return;
    }
    seen.set(result.filename, line);
    entries.push({ line, ...result });
  });

  const first = problems[0];
  if (first !== undefined) {
    const more =
      problems.length > 1
        ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})`
        : '';
    throw new VerificationError(`${file} line ${first.line}: ${first.problem}${more}`, {
      hint: `Every line must be "<64 lower-case hex digits><two spaces><file name>", as sha256sum writes it. ${REGENERATE}`,
      // The first problems are enough to act on; a file of garbage must not become a huge --json document.
      details: {
        file,
        line: first.line,
        problems: problems.slice(0, MAX_PROBLEMS),
        problemCount: problems.length,
      },
    });
  }
  return entries;
}

/** One line taken apart, or a description of what is wrong with it. */
function parseLine(raw: string): { shasum: string; filename: string } | string {
  if (raw.endsWith('\r'))
    return 'ends with a carriage return (Windows line ending); use plain \\n line endings';
  if (raw.startsWith('\uFEFF')) {
    return 'starts with a byte order mark (BOM, U+FEFF); Terraform reads it as part of the hash and refuses the line. Save the file as UTF-8 without BOM';
  }
  if (raw.trim() === '') return 'is empty';
  const space = raw.search(/\s/);
  const hash = space === -1 ? raw : raw.slice(0, space);
  const hashProblem = checkHash(hash);
  if (hashProblem !== undefined) return hashProblem;
  if (space === -1) return 'has a hash but no file name';
  if (raw[space] !== ' ') return 'separates hash and file name with a tab; use exactly two spaces';
  const rest = raw.slice(space);
  if (rest.startsWith(' *') || rest.startsWith('  *')) {
    return 'has a "*" binary-mode marker before the file name (sha256sum -b); Terraform would look for a file named "*…"';
  }
  if (!rest.startsWith('  ') || rest.startsWith('   '))
    return 'must separate hash and file name with exactly two spaces';
  const filename = rest.slice(2);
  return checkFileName(filename) ?? { shasum: hash, filename };
}

function checkHash(hash: string): string | undefined {
  if (/^[0-9a-f]{64}$/.test(hash)) return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(hash))
    return 'the hash has upper-case hex digits; Terraform expects lower case';
  if (/^[0-9a-fA-F]+$/.test(hash)) return `the hash has ${hash.length} hex digits; a SHA-256 has 64`;
  return `"${truncate(hash)}" is not a hexadecimal SHA-256 hash`;
}

function checkFileName(filename: string): string | undefined {
  if (filename === '') return 'has no file name';
  if (filename.includes('/') || filename.includes('\\')) {
    return `"${shorten(filename)}" has a path; list the bare file name (Terraform compares names byte for byte)`;
  }
  if (filename === '.' || filename === '..' || filename.includes('..'))
    return `"${shorten(filename)}" contains ".."`;
  if (/\s/.test(filename))
    return `"${shorten(filename)}" contains white space; Terraform splits lines on white space`;
  if (/\p{Cc}/u.test(filename)) return 'the file name contains control characters';
  return undefined;
}

function truncate(text: string): string {
  return text.length > 24 ? `${text.slice(0, 24)}…` : text;
}
