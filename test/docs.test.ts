import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Lexer, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { brokenLinks, headingAnchors, linkTargets } from './helpers/markdown.js';
import { tempDir } from './helpers/tmp.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('README.md is a manual a user reads top to bottom', () => {
  it('is at most 500 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(500);
  });

  it('has its sections in the order a user needs them', () => {
    const sections = new Lexer()
      .lex(readme)
      .filter((t): t is Tokens.Heading => t.type === 'heading' && t.depth === 2)
      .map((t) => t.text);
    expect(sections).toEqual([
      'Install',
      'Quick start',
      '`provider publish`',
      '`provider verify`',
      '`provider lock`',
      '`provider mirror`',
      '`provider versions`, `platforms` and `check`',
      '`provider delete` and `provider gpg-keys`',
      '`provider runtask`',
      '`provider emulate`',
      '`provider completion`',
      'Configuration and credentials',
      'Exit codes',
      'CI usage',
      'Run task set-ups',
      'The emulator',
      'Reliability',
      'Performance',
      'Architecture',
      'Development',
      'Releasing',
    ]);
  });

  it("links each command's section and each subject to its page in docs/", () => {
    const targets = linkTargets(readme);
    for (const page of [
      'docs/install.md',
      'docs/publish.md',
      'docs/verify.md',
      'docs/lock.md',
      'docs/supply-chain.md',
      'docs/reads.md',
      'docs/cleanup.md',
      'docs/runtask.md',
      'docs/runtask-send.md',
      'docs/emulator.md',
      'docs/configuration.md',
      'docs/ci.md',
      'docs/reliability.md',
      'docs/performance.md',
      'docs/architecture.md',
      'docs/development.md',
      'docs/releasing.md',
    ])
      expect(
        targets.some((t) => t.split('#')[0] === page),
        page,
      ).toBe(true);
  });
});

describe('every relative link in README.md and docs/ leads somewhere', () => {
  it.each(pages)('%s: every relative link names an existing file, and an existing heading of it', (page) => {
    expect(brokenLinks(root, page)).toEqual([]);
  });

  it('anchors follow GitHub: code and punctuation dropped, spaces to hyphens, repeats numbered', () => {
    expect(
      headingAnchors(
        [
          '# provider',
          '## `provider lock [release-dir]`: lock files for every platform',
          '## GitLab CI/CD',
          '## `provider versions`, `platforms` and `check`',
          '## Options',
          '### Options',
          '## What is *not* met, and why',
        ].join('\n\n'),
      ),
    ).toEqual([
      'provider',
      'provider-lock-release-dir-lock-files-for-every-platform',
      'gitlab-cicd',
      'provider-versions-platforms-and-check',
      'options',
      'options-1',
      'what-is-not-met-and-why',
    ]);
  });

  it('reports a missing file, a missing heading and a missing anchor on the same page; not a link in code', () => {
    const dir = tempDir('links');
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'a.md'), '# A page\n\n## Its part\n');
    const page = [
      '# Top',
      '[fine](docs/a.md) [fine too](docs/a.md#its-part) [here](#top) [web](https://example.com/x.md)',
      '[gone](docs/b.md) [no such part](docs/a.md#other-part) [no such anchor](#bottom)',
      '```md\n[in code](docs/c.md)\n```',
    ].join('\n\n');
    writeFileSync(join(dir, 'README.md'), page);
    expect(brokenLinks(dir, 'README.md')).toEqual([
      'README.md: docs/b.md (no file docs/b.md)',
      'README.md: docs/a.md#other-part (no heading #other-part in docs/a.md)',
      'README.md: #bottom (no heading #bottom in README.md)',
    ]);
  });
});
