/**
 * docs/mirror.md says what the `--to-dir` folders are and are not: the layout it shows is the one the mirror
 * writes (src/mirror/run.ts `versionFolder`), and it says they are not a Terraform filesystem or network mirror,
 * naming what to use for those; its checks before anything is written are one numbered list, each step an item
 * of it (a paragraph between two steps once swallowed the last one).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Lexer, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { versionFolder } from '../../src/mirror/run.js';

const page = readFileSync(new URL('../../docs/mirror.md', import.meta.url), 'utf8');

/** The text of the section under `heading`, up to the next heading of its depth or above. */
function section(heading: string): string {
  const tokens = new Lexer().lex(page);
  const start = tokens.findIndex((t) => t.type === 'heading' && (t as Tokens.Heading).text === heading);
  expect(start, `docs/mirror.md has a section "${heading}"`).toBeGreaterThanOrEqual(0);
  const depth = (tokens[start] as Tokens.Heading).depth;
  const end = tokens.findIndex(
    (t, i) => i > start && t.type === 'heading' && (t as Tokens.Heading).depth <= depth,
  );
  return tokens
    .slice(start, end < 0 ? undefined : end)
    .map((t) => t.raw)
    .join('');
}

describe('docs/mirror.md', () => {
  it('shows the --to-dir layout the mirror writes, origin host first', () => {
    const folder = versionFolder(
      './mirror',
      'registry.terraform.io',
      { namespace: 'hashicorp', type: 'random' },
      '3.6.3',
    );
    expect(page).toContain(`provider publish ./${folder.split(path.sep).join('/')} `);
    expect(page).toContain('`./mirror/<host>/<namespace>/<type>/<version>/`');
  });

  it('says the folders are not a Terraform filesystem or network mirror, and what to use for those', () => {
    const text = section('Not a Terraform mirror');
    expect(text).toMatch(/\*\*not\*\* a\s+Terraform filesystem mirror/);
    expect(text).toMatch(/\*\*not\*\* a network mirror/);
    for (const named of [
      'terraform providers mirror',
      'filesystem_mirror',
      'network_mirror',
      'provider_installation',
    ])
      expect(text).toContain(named);
  });

  it('lists the checks before anything is written as one numbered list of six steps', () => {
    const tokens = new Lexer().lex(section('What is checked before anything is written'));
    const lists = tokens.filter((t): t is Tokens.List => t.type === 'list' && (t as Tokens.List).ordered);
    expect(lists).toHaveLength(1);
    const items = lists[0]!.items.map((i) => i.text);
    expect(items).toHaveLength(6);
    expect(items[0]).toMatch(/^The origin serves at least one signing key/);
    expect(items[5]).toMatch(/^The folder as a whole verifies as `provider verify` checks a release/);
  });
});
