/**
 * "Every retry in src/ goes through the one module": a scan of src/ for the shapes a hand-written retry takes —
 * an attempt counter, an endless counting loop, a sleep, an exponential backoff, a `Retry-After` or
 * `X-RateLimit-Reset` read, got's own retry settings, the deleted backoff modules — anywhere but
 * src/net/retry*.ts. The emulator (src/emulator/) is the server side: it writes those headers and sleeps on
 * purpose to simulate slow answers, and is scanned only for retries.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** What a retry loop looks like, and where (besides src/net/retry*.ts) each shape is allowed, with why. */
const RULES: { name: string; pattern: RegExp; allowed?: Record<string, string> }[] = [
  {
    name: 'an attempt counter',
    pattern:
      /\b(attempts?|retry|retries|tries|refresh(es)?)\s*(\+\+|\+=)|for \(let (attempts?|retry|retries|tries|n|refresh) = \d/,
    allowed: {
      'src/runtask/server/journal/journal.ts':
        're-creating the state folder a cleaner removed (file system, not a request): a few tries, then 503',
    },
  },
  {
    name: 'an endless counting loop',
    pattern: /for \(let \w+ = \d+; ;/,
    allowed: {
      'src/publish/wait.ts': 'a poll of the uploaded flags, not a retry: each read is retried by the client',
    },
  },
  {
    name: 'a sleep',
    pattern:
      /import \{[^}]*\bsetTimeout\b[^}]*\} from 'node:timers\/promises'|new Promise\(\(?resolve\)? => setTimeout\(resolve/,
    allowed: { 'src/emulator/': 'the emulator delays answers on purpose (faults, shaping, links)' },
  },
  { name: 'an exponential backoff', pattern: /\b2\s*\*\*/ },
  {
    name: 'a Retry-After or X-RateLimit-Reset read',
    pattern:
      /(\[\s*['"](retry-after|x-ratelimit-reset)['"]\s*\](?!\s*=[^=])|\.get\(\s*['"](retry-after|x-ratelimit-reset)['"])/i,
  },
  { name: "got's own retry", pattern: /calculateDelay|maxRetryAfter|backoffLimit|statusCodes:|errorCodes:/ },
  {
    name: 'a deleted backoff module',
    pattern: /registry\/backoff\.js|runtask\/retry\.js|from '\.\.\/retry\.js'/,
  },
];

/** Every `.ts` file under `dir`, as paths relative to the repository. */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [path.relative(ROOT, full).split(path.sep).join('/')] : [];
  });
}

/** `file:line: rule` for every line of `src` that looks like a retry of its own. */
export function retryShapes(root: string): string[] {
  const found: string[] = [];
  for (const file of sources(path.join(root, 'src'))) {
    const relative = path.relative(root, path.join(ROOT, file)).split(path.sep).join('/');
    if (/^src\/net\/retry\w*\.ts$/.test(relative)) continue;
    const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const rule of RULES) {
        if (!rule.pattern.test(line)) continue;
        const allowed = Object.keys(rule.allowed ?? {}).some((where) => relative.startsWith(where));
        if (!allowed) found.push(`${relative}:${i + 1}: ${rule.name}: ${line.trim()}`);
      }
    });
  }
  return found;
}

describe('one retry loop', () => {
  it('src/ has no retry loop, sleep, backoff or Retry-After parsing outside src/net/retry*.ts', () => {
    expect(retryShapes(ROOT)).toEqual([]);
  });

  it("got's own retries are off wherever got is set up (its default is 2 retries of its own)", () => {
    for (const file of sources(path.join(ROOT, 'src'))) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      const setups = text.match(/\bgot\.extend\(/g)?.length ?? 0;
      const off = text.match(/retry: \{ limit: 0 \}/g)?.length ?? 0;
      expect(off, `${file}: got.extend without retry: { limit: 0 }`).toBeGreaterThanOrEqual(setups);
    }
  });

  it('the scan finds each shape (so that it cannot pass by finding nothing)', () => {
    const samples = [
      'for (let attempt = 1; ; attempt++) {',
      'retries++;',
      'for (let n = 1; ; n++) {',
      "import { setTimeout as sleep } from 'node:timers/promises';",
      'return new Promise((resolve) => setTimeout(resolve, ms));',
      'const ceiling = base * 2 ** (attempt - 1);',
      "const header = error.response.headers['retry-after'];",
      "Number(response.headers.get('x-ratelimit-reset'))",
      'retry: { limit: 4, calculateDelay: () => 0 },',
      "import { pause } from '../registry/backoff.js';",
    ];
    for (const sample of samples) {
      expect(
        RULES.some((rule) => rule.pattern.test(sample)),
        sample,
      ).toBe(true);
    }
    // What the server side writes is no read; a read loop over a file is no attempt counter.
    expect(RULES.some((rule) => rule.pattern.test("headers['retry-after'] = String(seconds);"))).toBe(false);
    expect(RULES.some((rule) => rule.pattern.test('for (let n = readSync(fd, chunk); n > 0; ) {'))).toBe(
      false,
    );
  });
});
