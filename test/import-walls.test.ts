/**
 * The walls between the folders of src/ and the rule against import circles, as .dependency-cruiser.mjs draws
 * them (`npm run lint` runs dependency-cruiser over src/): each case writes a few files into a temporary tree
 * shaped like src/, cruises it with the repository's own rules (dependency-cruiser's API, `baseDir` the tree), and
 * the import must be refused by the rule named, with the message that says what to do instead, or pass. And the
 * real src/ passes every rule.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';
import config, { LAYERS } from '../.dependency-cruiser.mjs';
import { tempDir } from './helpers/tmp.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** One violation: the rule, the two files, and the rule's message. */
interface Violation {
  rule: string;
  from: string;
  to: string;
  message: string;
}

/** The violations dependency-cruiser finds in `files` (path → text), with the project's rules. */
async function violations(files: Record<string, string>, baseDir?: string): Promise<Violation[]> {
  let dir = baseDir;
  if (dir === undefined) {
    dir = tempDir('walls');
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, dirname(path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  }
  const rules = new Map(config.forbidden?.map((rule) => [rule.name, rule.comment ?? '']));
  const { output } = await cruise(['src'], {
    ...config.options,
    baseDir: dir,
    tsConfig: undefined,
    ruleSet: { forbidden: config.forbidden ?? [] },
    validate: true,
  });
  const result = output as ICruiseResult;
  return result.summary.violations.map((v) => ({
    rule: v.rule.name,
    from: v.from,
    to: v.to,
    message: rules.get(v.rule.name) ?? '',
  }));
}

/** A module at `path` importing `target` (a relative specifier), and the target itself. */
function importing(path: string, specifier: string): Record<string, string> {
  const target = join(dirname(path), specifier).replace(/\.js$/, '.ts');
  return { [path]: `export * from '${specifier}';\n`, [target]: 'export const x = 1;\n' };
}

/** Expects a violation of `rule` from `from`, whose message holds `words`. */
function expectRefused(found: Violation[], rule: string, from: string, words: string): void {
  const hit = found.find((v) => v.rule === rule && v.from === from);
  expect(hit, `${rule} for ${from} in ${JSON.stringify(found)}`).toBeDefined();
  expect(hit?.message).toContain(words);
}

describe('the layers: a folder imports only from lower layers', () => {
  it.each([
    ['src/commands/x.ts', '../cli/main.js', 'cli-wall', 'Only src/cli/ imports src/cli/'],
    ['src/commands/runtask/x.ts', '../../cli/main.js', 'cli-wall', 'Only src/cli/ imports src/cli/'],
    ['src/emulator/routes/x.ts', '../../cli/context.js', 'cli-wall', 'Only src/cli/ imports src/cli/'],
    ['src/commands/x.ts', '../cli/main.js', 'layer-commands', 'on layer 5'],
    ['src/release/x.ts', '../registry/http.js', 'layer-release', 'does not use the registry client'],
    ['src/registry/x.ts', '../release/hashing.js', 'layer-registry', 'does not import verification'],
    ['src/emulator/x.ts', '../publish/plan.js', 'layer-emulator', "the platform's side of the wire"],
    ['src/emulator/x.ts', '../consumer/check.js', 'layer-emulator', 'on layer 2'],
    ['src/terraform/x.ts', '../ui/output.js', 'layer-terraform', 'imports nothing of the product'],
    ['src/terraform/runtask/x.ts', '../../runtask/server/jobs.js', 'layer-terraform', 'vocabulary'],
    ['src/net/x.ts', '../config/index.js', 'layer-net', 'Move what both need down a layer'],
    ['src/publish/x.ts', '../mirror/run.js', 'layer-publish', 'never'],
    ['src/runtask/send/x.ts', '../../commands/runtask/send.js', 'layer-runtask', 'on layer 4'],
  ])('%s importing %s is refused (%s)', async (from, specifier, rule, words) => {
    expectRefused(await violations(importing(from, specifier)), rule, from, words);
  });

  it('a dynamic import() is refused too', async () => {
    const found = await violations({
      'src/release/x.ts': "export const load = () => import('../registry/gpgKeys.js');\n",
      'src/registry/gpgKeys.ts': 'export const x = 1;\n',
    });
    expectRefused(found, 'layer-release', 'src/release/x.ts', 'does not use the registry client');
  });

  it('a type-only import is refused too', async () => {
    const found = await violations({
      'src/emulator/x.ts': "import type { A } from '../publish/types.js';\nexport type B = A;\n",
      'src/publish/types.ts': 'export type A = 1;\n',
    });
    expectRefused(found, 'layer-emulator', 'src/emulator/x.ts', "the platform's side of the wire");
  });

  it('imports down the layers, within a folder and of src/*.ts pass', async () => {
    const found = await violations({
      'src/cli/x.ts': "export * from '../commands/y.js';\n",
      'src/commands/y.ts': "export * from '../publish/z.js';\nexport * from './manage/w.js';\n",
      'src/commands/manage/w.ts': "export * from '../../registry/v.js';\n",
      'src/publish/z.ts': "export * from '../consumer/u.js';\nexport * from '../errors.js';\n",
      'src/consumer/u.ts': "export * from '../release/t.js';\n",
      'src/release/t.ts': "export * from '../terraform/s.js';\nexport * from '../ui/r.js';\n",
      'src/registry/v.ts': "export * from '../net/q.js';\nexport * from '../config/p.js';\n",
      'src/runtask/send/o.ts': "export * from '../../emulator/runtask/n.js';\n",
      'src/emulator/runtask/n.ts': "export * from '../../terraform/runtask/m.js';\n",
      'src/terraform/s.ts': 'export const s = 1;\n',
      'src/terraform/runtask/m.ts': "export * from '../s.js';\n",
      'src/ui/r.ts': "export * from '../terraform/s.js';\n",
      'src/net/q.ts': 'export const q = 1;\n',
      'src/config/p.ts': 'export const p = 1;\n',
      'src/errors.ts': 'export const e = 1;\n',
    });
    expect(found).toEqual([]);
  });

  it('every folder of src/ is on a layer', async () => {
    const { readdirSync } = await import('node:fs');
    const folders = readdirSync(join(root, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(LAYERS.flat().sort()).toEqual(folders);
  });
});

describe('the emulator shares only src/terraform/ and src/net/ with the product', () => {
  it('an import of src/ui/ (a lower layer) is refused', async () => {
    const found = await violations(importing('src/emulator/x.ts', '../ui/output.js'));
    expectRefused(found, 'emulator-side', 'src/emulator/x.ts', 'never the product');
  });
});

describe('no import circle between files', () => {
  it('two files importing each other are refused, type-only imports included', async () => {
    const found = await violations({
      'src/publish/a.ts': "import type { B } from './b.js';\nexport type A = B | 1;\n",
      'src/publish/b.ts': "import type { A } from './a.js';\nexport type B = A | 2;\n",
    });
    expectRefused(found, 'no-circular', 'src/publish/a.ts', 'type-only imports count');
  });

  it('a circle through three files is refused', async () => {
    const found = await violations({
      'src/runtask/server/a.ts': "export * from './b.js';\nexport const a = 1;\n",
      'src/runtask/server/b.ts': "export * from './c.js';\nexport const b = 1;\n",
      'src/runtask/server/c.ts': "import { a } from './a.js';\nexport const c = a;\n",
    });
    expect(found.filter((v) => v.rule === 'no-circular').map((v) => v.from)).toContain(
      'src/runtask/server/a.ts',
    );
  });
});

describe('the real src/', () => {
  it('passes every rule', async () => {
    expect(await violations({}, root)).toEqual([]);
  });
});
