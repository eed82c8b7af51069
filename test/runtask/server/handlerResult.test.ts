/**
 * How a handler's exit is read when its output went past the integrator's capture limit (8 MiB): a report or a
 * JSON result cut there is no longer what the check said and fails the task, whatever the exit code; plain text
 * over the limit is read by the exit code, as it always was; `--result-format exit-code` never looks at stdout.
 */
import { describe, expect, it } from 'vitest';
import type { HandlerExit } from '../../../src/runtask/server/handler/handler.js';
import { interpretHandlerExit } from '../../../src/runtask/server/handler/handlerResult.js';

function exit(stdout: string, truncated: boolean, exitCode = 0): HandlerExit {
  return {
    exitCode,
    signal: null,
    timedOut: false,
    aborted: false,
    stdout,
    stdoutTruncated: truncated,
    stderrTail: '',
    durationMs: 5,
  };
}

describe('output cut at the capture limit', () => {
  it('a cut report or JSON result fails, even on exit code 0', async () => {
    for (const stdout of [
      '{"version":"2.1.0","runs":[{"tool"',
      '<testsuites><testsuite name="x">',
      '{"status":"pass',
    ]) {
      const read = await interpretHandlerExit(exit(stdout, true), '1m');
      expect(read.result.status, stdout).toBe('failed');
      expect(read.result.message).toContain('more than the integrator reads (8 MiB)');
    }
  });

  it('plain text over the limit is read by its exit code; exit-code never reads stdout', async () => {
    expect((await interpretHandlerExit(exit('log line\n'.repeat(3), true), '1m')).result).toEqual({
      status: 'passed',
      message: 'log line',
    });
    expect((await interpretHandlerExit(exit('log line', true, 2), '1m')).result.status).toBe('failed');
    const ignored = await interpretHandlerExit(exit('{"version":"2.1.0","runs":[', true), '1m', {
      format: 'exit-code',
      failOn: 'error',
    });
    expect(ignored.result.status).toBe('passed');
  });

  it('the same output, not cut, is read as before', async () => {
    expect(
      (await interpretHandlerExit(exit('{"status":"passed","message":"ok"}', false), '1m')).result,
    ).toEqual({
      status: 'passed',
      message: 'ok',
    });
  });
});
