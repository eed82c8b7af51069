/**
 * Reading a `.terraform.lock.hcl` with the HCL parser (hcl.ts): where each top-level `provider` block is (its
 * exact source range, so a merge can replace one block and leave every other character as it was), its address,
 * and, for the block the command updates, its `version`, `constraints` and `hashes` as Terraform decodes them
 * (hashicorp/terraform: internal/depsfile/locks_file.go, `decodeProviderLockFromHCL`). A file that does not
 * parse, or a block of the updated provider that Terraform would refuse, is a LockFileError (exit 2) naming the
 * file and line.
 *
 * Before parsing, every line is held to MAX_LINE_LENGTH: the HCL grammar's scanner makes a token of each character
 * inside quotes, some 180 bytes of parser memory a character, so one string of 7 MiB cost 1.3 GB and 6 s.
 */
import { UsageError } from '../errors.js';
import { firstSyntaxError, parseHcl, type HclNode } from './hcl.js';
import { visible } from '../ui/output.js';

/** A top-level item of the file: a block, an attribute or a comment, with its source range (code units). */
export interface LockFileItem {
  kind: 'block' | 'attribute' | 'comment';
  start: number;
  end: number;
  /** 0-based rows of its first and last character. */
  startRow: number;
  endRow: number;
}

/** A top-level `provider "<address>" { … }` block. */
export interface ProviderBlock extends LockFileItem {
  kind: 'block';
  /** The label as written. */
  label: string;
  /** 1-based line of `provider`. */
  line: number;
  node: HclNode;
}

/** A parsed lock file: its text, its top-level items in order, and the provider blocks among them. */
export interface ParsedLockFile {
  text: string;
  items: LockFileItem[];
  providers: ProviderBlock[];
}

/** The entry of one provider as the file holds it. */
export interface LockedProvider {
  version: string;
  constraints?: string | undefined;
  hashes: string[];
  line: number;
}

/** A lock file Terraform would refuse, or that cannot be updated safely: exit 2, naming `file:line`. */
export class LockFileError extends UsageError {}

const HINT =
  'Fix that line (terraform init would refuse the file too), or move the file aside to start a new one; it was not changed.';

// What a token the parser had to invent is, in words.
const MISSING: Record<string, string> = {
  quoted_template_end: 'a closing "',
  ']': 'a closing ]',
  ')': 'a closing )',
  block_end: 'a closing }',
  tuple_end: 'a closing ]',
  object_end: 'a closing }',
};

/**
 * The longest line read, in characters: Terraform writes one hash a line, and its longest line, a provider
 * block's first, holds an address of at most some 400 characters. A line at this length costs the parser ~12 MB.
 */
export const MAX_LINE_LENGTH = 64 * 1024;

function fail(file: string, line: number, problem: string): LockFileError {
  return new LockFileError(`${file}:${line}: ${problem}`, { hint: HINT, details: { file, line } });
}

/** Parses the lock file's text; throws LockFileError for a syntax error. `file` names it in messages. */
export async function parseLockFile(text: string, file: string): Promise<ParsedLockFile> {
  checkLineLengths(text, file);
  const root = await parseHcl(text);
  // HCL's quoted strings end on their line (hclsyntax: "Unterminated template string"); tree-sitter's grammar
  // lets one run on, so an unclosed quote is found here, on its own line, rather than at the end of the file.
  const runaway = root
    .descendantsOfType(['string_lit', 'quoted_template'])
    .find((n) => n.startPosition.row !== n.endPosition.row);
  const error = firstSyntaxError(root);
  if (runaway !== undefined && (error === undefined || runaway.startIndex <= error.startIndex)) {
    throw fail(
      file,
      runaway.startPosition.row + 1,
      'a quoted string is not closed on its line: this is not valid HCL',
    );
  }
  if (error !== undefined) {
    let opened: HclNode | null = error;
    while (opened !== null && opened.type !== 'block') opened = opened.parent;
    if (error.isMissing && (error.type === '}' || error.type === 'block_end') && opened !== null) {
      // Like HCL's "Unclosed configuration block": said where the block opens, not at the end of the file.
      const line = opened.startPosition.row + 1;
      throw fail(file, line, 'this block has no closing }: this is not valid HCL');
    }
    const missing = MISSING[error.type] ?? JSON.stringify(error.type);
    const what = error.isMissing ? `${missing} is missing` : 'a syntax error';
    throw fail(file, error.startPosition.row + 1, `${what}: this is not valid HCL`);
  }
  const nodes: HclNode[] = [];
  for (const child of root.children) {
    // One at a time: spread into push, 200 000 items overflowed the stack.
    if (child.type === 'body') for (const item of child.children) nodes.push(item);
    else nodes.push(child);
  }
  const items: LockFileItem[] = [];
  const providers: ProviderBlock[] = [];
  for (const node of nodes.sort((a, b) => a.startIndex - b.startIndex)) {
    const kind = node.type === 'comment' ? 'comment' : node.type === 'attribute' ? 'attribute' : 'block';
    const item: LockFileItem = {
      kind,
      start: node.startIndex,
      end: node.endIndex,
      startRow: node.startPosition.row,
      endRow: node.endPosition.row,
    };
    items.push(item);
    if (node.type !== 'block' || node.children[0]?.text !== 'provider') continue;
    const labels = node.children.filter((c) => c.type === 'string_lit' || c.type === 'identifier').slice(1);
    const line = node.startPosition.row + 1;
    const label =
      labels.length === 1 && labels[0]!.type === 'string_lit' ? stringValue(labels[0]!, file) : undefined;
    if (label === undefined) throw fail(file, line, 'a provider block takes one quoted label, its address');
    providers.push({ ...item, kind: 'block', label, line, node });
  }
  return { text, items, providers };
}

/** The provider blocks of `address` (compared as Terraform compares addresses: case-insensitively). */
export function findProvider(parsed: ParsedLockFile, address: string): ProviderBlock[] {
  const wanted = address.toLowerCase();
  return parsed.providers.filter((p) => p.label.toLowerCase() === wanted);
}

/** Decodes one provider block as Terraform would; throws LockFileError naming the line of what is wrong. */
export function readProviderBlock(block: ProviderBlock, file: string): LockedProvider {
  const body = block.node.children.find((c) => c.type === 'body');
  const seen = new Map<string, number>();
  let version: string | undefined;
  let constraints: string | undefined;
  let hashes: string[] = [];
  for (const node of body?.children ?? []) {
    const line = node.startPosition.row + 1;
    if (node.type === 'comment') continue;
    if (node.type !== 'attribute') throw fail(file, line, `unexpected ${node.type} in the provider block`);
    const name = node.children[0]!.text;
    const first = seen.get(name);
    if (first !== undefined) throw fail(file, line, `${name} is set twice (first on line ${first})`);
    seen.set(name, line);
    const expression = node.children.find((c) => c.type === 'expression');
    if (name === 'version' || name === 'constraints') {
      const value = expression === undefined ? undefined : literalString(expression, file);
      if (value === undefined) throw fail(file, line, `${name} must be a quoted string`);
      if (name === 'version') version = value;
      else constraints = value;
    } else if (name === 'hashes') {
      const list = expression === undefined ? undefined : stringList(expression, file);
      if (list === undefined) throw fail(file, line, 'hashes must be a list of quoted strings');
      hashes = list;
    } else {
      throw fail(file, line, `unsupported argument ${JSON.stringify(name)} in a provider block`);
    }
  }
  if (version === undefined)
    throw fail(file, block.line, `the block of ${visible(block.label)} has no version`);
  return { version, constraints, hashes, line: block.line };
}

// A string literal's value (`"…"` without interpolation), or undefined for anything else.
function literalString(expression: HclNode, file: string): string | undefined {
  const literal = expression.children[0];
  if (literal?.type !== 'literal_value') return undefined;
  const string = literal.children[0];
  return string?.type === 'string_lit' ? stringValue(string, file) : undefined;
}

// A tuple of string literals, or undefined for anything else.
function stringList(expression: HclNode, file: string): string[] | undefined {
  const tuple = expression.children[0]?.children[0];
  if (tuple?.type !== 'tuple') return undefined;
  const values: string[] = [];
  for (const child of tuple.namedChildren) {
    if (child.type === 'comment' || child.type === 'tuple_start' || child.type === 'tuple_end') continue;
    const value = child.type === 'expression' ? literalString(child, file) : undefined;
    if (value === undefined) return undefined;
    values.push(value);
  }
  return values;
}

/**
 * The value of a `string_lit` node: its text between the quotes, HCL escapes decoded. A `\\u`/`\\U` escape of no
 * Unicode character (a surrogate, or above U+10FFFF) is refused, as HCL refuses it ("Invalid escape sequence":
 * hashicorp/hcl, hclsyntax/parser.go, `utf8.RuneLen` of -1).
 */
function stringValue(node: HclNode, file: string): string {
  const raw = node.text.slice(1, -1);
  return raw.replace(
    /\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))|([$%])\4\{/gs,
    (escape: string, u4?: string, u8?: string, c?: string, doubled?: string) => {
      if (doubled !== undefined) return `${doubled}{`;
      const hex = u4 ?? u8;
      if (hex !== undefined) {
        const code = parseInt(hex, 16);
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
          const problem = `the escape ${escape} is not a Unicode character: this is not valid HCL`;
          throw fail(file, node.startPosition.row + 1, problem);
        }
        return String.fromCodePoint(code);
      }
      return ({ n: '\n', r: '\r', t: '\t' } as Record<string, string>)[c!] ?? c!;
    },
  );
}

/** Throws LockFileError naming the first line longer than MAX_LINE_LENGTH. */
function checkLineLengths(text: string, file: string): void {
  let line = 1;
  for (let start = 0; start <= text.length; line++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    if (end - start > MAX_LINE_LENGTH) {
      const problem = `this line is ${end - start} characters long, more than the ${MAX_LINE_LENGTH} a lock file's lines may hold`;
      throw fail(file, line, problem);
    }
    if (newline === -1) break;
    start = newline + 1;
  }
}
