import { describe, expect, it } from 'vitest';
import { ApiError, UsageError } from '../../src/errors.js';
import { Output, colorLevel } from '../../src/ui/output.js';
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
