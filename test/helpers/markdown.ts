/**
 * Reading the project's Markdown pages as GitHub renders them, with marked's lexer (a CommonMark/GFM parser):
 * the links a page makes, the anchors its headings get, and its fenced code blocks.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Lexer, type Token, type Tokens } from 'marked';

/** Every token of a page, nested ones included (list items, table cells, emphasis, link texts…). */
function walk(tokens: Token[], into: Token[] = []): Token[] {
  for (const token of tokens) {
    into.push(token);
    const t = token as Token & {
      tokens?: Token[];
      items?: Token[];
      header?: Tokens.TableCell[];
      rows?: Tokens.TableCell[][];
    };
    if (t.tokens) walk(t.tokens, into);
    if (t.items) walk(t.items, into);
    if (t.header) for (const cell of t.header) walk(cell.tokens, into);
    if (t.rows) for (const row of t.rows) for (const cell of row) walk(cell.tokens, into);
  }
  return into;
}

/** The plain text of inline tokens, as GitHub puts it in a heading's anchor (code spans without backticks). */
function plainText(tokens: Token[]): string {
  return tokens
    .map((token) => {
      const t = token as Token & { tokens?: Token[]; text?: string };
      if (t.tokens && t.type !== 'codespan') return plainText(t.tokens);
      return t.type === 'html' ? '' : (t.text ?? '');
    })
    .join('');
}

/**
 * GitHub's heading anchor (github-slugger): lower case, every character that is not a letter, a digit, a mark,
 * `_`, `-` or a space removed, spaces turned into `-`; a repeated anchor gets `-1`, `-2`, … in page order.
 */
export function headingAnchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  return walk(new Lexer({ gfm: true }).lex(markdown))
    .filter((token): token is Tokens.Heading => token.type === 'heading')
    .map((heading) => {
      const base = plainText(heading.tokens)
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
        .replace(/ /g, '-');
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      return count === 0 ? base : `${base}-${count}`;
    });
}

/** The targets of every link and image of a page, in page order. */
export function linkTargets(markdown: string): string[] {
  return walk(new Lexer({ gfm: true }).lex(markdown))
    .filter((token): token is Tokens.Link | Tokens.Image => token.type === 'link' || token.type === 'image')
    .map((token) => token.href);
}

/**
 * The relative links of the page at `file` (a path under `root`) that lead nowhere: to a missing file, or to an
 * anchor no heading of the target page has. Links with a scheme (https:, mailto:) are not followed.
 */
export function brokenLinks(
  root: string,
  file: string,
  markdown = readFileSync(join(root, file), 'utf8'),
): string[] {
  const broken: string[] = [];
  for (const href of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
    const [path = '', anchor] = href.split('#', 2);
    const target = path === '' ? join(root, file) : join(root, dirname(file), decodeURIComponent(path));
    if (!existsSync(target)) {
      broken.push(`${file}: ${href} (no file ${relative(root, target)})`);
      continue;
    }
    if (anchor === undefined) continue;
    if (
      !target.endsWith('.md') ||
      !headingAnchors(readFileSync(target, 'utf8')).includes(decodeURIComponent(anchor))
    )
      broken.push(`${file}: ${href} (no heading #${anchor} in ${relative(root, target)})`);
  }
  return broken;
}

/** A fenced code block: its language (the info string's first word) and its text. */
export interface CodeBlock {
  lang: string;
  text: string;
}

/** The fenced code blocks of a page, in page order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return walk(new Lexer({ gfm: true }).lex(markdown))
    .filter((token): token is Tokens.Code => token.type === 'code')
    .map((token) => ({ lang: (token.lang ?? '').split(/\s/)[0]!, text: token.text }));
}
