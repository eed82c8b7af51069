import { describe, expect, it } from 'vitest';
import { ApiError, ConflictError, UsageError } from '../../src/errors.js';
import { Output, colorLevel, jobLine } from '../../src/ui/output.js';
import { Capture } from '../helpers/cli.js';

function sink(
  options: { json?: boolean; quiet?: boolean; env?: Record<string, string>; tty?: boolean } = {},
) {
  const stdout = new Capture(options.tty);
  const stderr = new Capture(options.tty);
  const output = new Output({
    stdout,
    stderr,
    env: options.env ?? {},
    json: options.json,
    quiet: options.quiet,
  });
  return { output, stdout, stderr };
}

describe('Output', () => {
  it('sends results to stdout and chatter to stderr', () => {
    const { output, stdout, stderr } = sink();
    output.result('the result');
    output.info('working on it');
    expect(stdout.text).toBe('the result\n');
    expect(stderr.text).toBe('working on it\n');
  });

  it('prints exactly one JSON document in --json mode and refuses a second', () => {
    const { output, stdout } = sink({ json: true });
    output.result('ignored in json mode');
    output.resultJson({ ok: true });
    expect(stdout.text).toBe('{"ok":true}\n');
    expect(() => output.resultJson({ ok: true })).toThrow(/exactly one document/);
  });

  it('is quiet with --quiet but still warns', () => {
    const { output, stderr } = sink({ quiet: true });
    output.info('chatter');
    output.warn('careful');
    expect(stderr.text).toBe('warning: careful\n');
  });

  it('redacts registered secrets everywhere', () => {
    const { output, stdout, stderr } = sink();
    output.addSecret('s3cr3t-token');
    output.result('token=s3cr3t-token');
    output.info('Bearer s3cr3t-token');
    output.failure(new UsageError('bad s3cr3t-token', { hint: 'not s3cr3t-token' }));
    expect(stdout.text + stderr.text).not.toContain('s3cr3t-token');
    expect(stdout.text).toContain('[redacted]');
  });

  it('writes the error document on stdout in --json mode and the words on stderr', () => {
    const { output, stdout, stderr } = sink({ json: true });
    output.failure(
      new ApiError('the API refused', { status: 422, serverDetail: 'Version has already been taken' }),
    );
    expect(JSON.parse(stdout.text)).toEqual({
      ok: false,
      error: { code: 'api', message: 'the API refused', hint: null, details: null },
    });
    expect(stderr.text).toContain('server said: Version has already been taken');
  });

  it('labels unknown errors as internal with a stack and a request to report', () => {
    const { output, stderr } = sink();
    output.failure(new TypeError('boom'));
    expect(stderr.text).toContain('error: boom');
    expect(stderr.text).toContain('This is a bug');
    expect(stderr.text).toContain('TypeError: boom');
  });

  it('emits GitHub Actions annotations under GITHUB_ACTIONS=true', () => {
    const { output, stderr } = sink({ env: { GITHUB_ACTIONS: 'true' } });
    output.failure(new UsageError('line one\nline two', { hint: 'fix it' }));
    expect(stderr.text).toContain('::error::line one%0Aline two — fix it');
  });
});

/** A registry error whose detail holds line breaks and workflow commands (hardening round 3). */
const HOSTILE =
  'bad value\n::set-output name=ok::forged\r\n::add-mask::visible\n  ::stop-commands::paused\nsee ##[add-mask]x, 100%0A done';

/** The lines the runner reads as workflow commands: `::name…` after leading spaces, or `##[` anywhere. */
function commandLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/).filter((line) => /^\s*::/.test(line) || line.includes('##['));
}

describe('Output in a CI job: server text never begins a line nor becomes a workflow command', () => {
  it('GitHub Actions: line breaks, a leading :: and ##[ are escaped; only its own annotation is a command', () => {
    const { output, stdout, stderr } = sink({ env: { GITHUB_ACTIONS: 'true' } });
    const refusal = new ApiError('POST /x was refused: 422', { status: 422, serverDetail: HOSTILE });
    output.failure(refusal);
    output.warn(`the registry said ${HOSTILE}`);
    output.info(HOSTILE);
    output.result('::add-mask::from-a-name');
    expect(commandLines(stdout.text)).toEqual([]);
    expect(commandLines(stderr.text).map((line) => line.slice(0, 10))).toEqual(['::error::P', '::warning:']);
    expect(stderr.text).toContain(
      'server said: bad value%0A::set-output name=ok::forged%0D%0A::add-mask::visible%0A  ::stop-commands::paused%0Asee ##%5Badd-mask]x, 100%250A done',
    );
    expect(stdout.text).toBe('%3A:add-mask::from-a-name\n');
  });

  it('GitLab CI: line breaks escaped, % only where it begins an escape; the text comes back exactly', () => {
    const { output, stderr } = sink({ env: { GITLAB_CI: 'true' } });
    output.info(`50% of ${HOSTILE}`);
    const [line, ...rest] = stderr.text.split('\n');
    expect(rest).toEqual(['']);
    expect(line).toMatch(/^50% of bad value%0A::set-output/);
    const decoded = line!
      .replace(/%0D/g, '\r')
      .replace(/%0A/g, '\n')
      .replace(/%3A/g, ':')
      .replace(/%5B/g, '[')
      .replace(/%25/g, '%');
    expect(decoded).toBe(`50% of ${HOSTILE}`);
  });

  it('outside a job, text is printed as given', () => {
    const { output, stderr } = sink();
    output.info(HOSTILE);
    expect(stderr.text).toBe(`${HOSTILE}\n`);
    expect(jobLine(HOSTILE, undefined)).toBe(HOSTILE);
  });

  it("an error's own list stays one line per item; a line break inside an item is escaped", () => {
    const { output, stderr } = sink({ env: { GITLAB_CI: 'true' } });
    output.failure(
      new ConflictError('example 1.2.3 holds different content:', {
        lines: ['  linux_amd64: shasum differs', `  darwin_arm64: ${HOSTILE}`],
      }),
    );
    const lines = stderr.text.trimEnd().split('\n');
    expect(lines[0]).toBe('error: example 1.2.3 holds different content:');
    expect(lines[1]).toBe('  linux_amd64: shasum differs');
    expect(lines[2]).toMatch(/^ {2}darwin_arm64: bad value%0A::set-output/);
    expect(lines).toHaveLength(3);
  });

  it('--json: one line, and under GitHub Actions ##[ in a string is written \\u005b (the same string)', () => {
    const { output, stdout } = sink({ json: true, env: { GITHUB_ACTIONS: 'true' } });
    output.failure(new ApiError('refused', { status: 422, details: { detail: HOSTILE } }));
    expect(stdout.text.split('\n')).toHaveLength(2);
    expect(commandLines(stdout.text)).toEqual([]);
    const doc = JSON.parse(stdout.text) as { error: { details: { detail: string } } };
    expect(doc.error.details.detail).toBe(HOSTILE);
  });
});

describe('colorLevel', () => {
  const tty = { isTTY: true, write: () => true };
  const pipe = { isTTY: false, write: () => true };
  it.each([
    [{ color: undefined, env: {}, stderr: tty }, 1],
    [{ color: undefined, env: {}, stderr: pipe }, 0],
    [{ color: false, env: {}, stderr: tty }, 0],
    [{ color: undefined, env: { NO_COLOR: '1' }, stderr: tty }, 0],
    [{ color: undefined, env: { NO_COLOR: '' }, stderr: tty }, 1],
    [{ color: undefined, env: { FORCE_COLOR: '1' }, stderr: pipe }, 1],
    [{ color: undefined, env: { FORCE_COLOR: '3' }, stderr: pipe }, 3],
    [{ color: undefined, env: { FORCE_COLOR: '0' }, stderr: tty }, 0],
  ] as const)('%o → %i', (options, level) => {
    expect(colorLevel(options)).toBe(level);
  });
});
