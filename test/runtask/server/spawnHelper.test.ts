/**
 * The handler runner's program (spawnHelper.ts) run as the integrator starts it, `node -e` with the function's
 * source (the bundles do the same: test/install/ runs their integrators). Over its IPC channel it starts a command
 * through the shell, reports the pid and then the outcome, prints nothing of its own, and ends when the channel
 * is closed.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { helperArgs } from '../../../src/runtask/server/handler/spawnHelper.js';
import type { HelperMessage, HelperRequest } from '../../../src/runtask/server/handler/spawnProtocol.js';

/** Runs the helper with Node's `args`, has it start one command, and disconnects once it ended. */
async function exchange(
  args: string[],
): Promise<{ messages: HelperMessage[]; code: number | null; output: string }> {
  const helper = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: {} });
  let output = '';
  helper.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  helper.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => helper.on('exit', (code) => resolve(code)));
  const messages: HelperMessage[] = [];
  const ended = new Promise<void>((resolve) => {
    helper.on('message', (message: HelperMessage) => {
      messages.push(message);
      if (message.type === 'ended') resolve();
    });
  });
  const request: HelperRequest = {
    id: 7,
    request: {
      command: 'printf "$GREETING, world"; echo "0123456789abcdef" >&2; exit 3',
      cwd: process.cwd(),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GREETING: 'hello' },
      stdoutLimit: 5,
      stderrTail: 8,
      closeWaitMs: 200,
    },
  };
  helper.send(request);
  await ended;
  helper.disconnect();
  return { messages, code: await exited, output };
}

const EXPECTED: HelperMessage[] = [
  { type: 'started', id: 7, pid: expect.any(Number) as number },
  {
    type: 'ended',
    id: 7,
    exitCode: 3,
    signal: null,
    stdout: 'hello',
    stdoutTruncated: true,
    stderrTail: '9abcdef\n',
  },
];

describe('the handler runner', () => {
  it('is run from its own source, with nothing to find beside it', () => {
    const [flag, source] = helperArgs();
    expect(flag).toBe('-e');
    expect(source).toMatch(/^\(function handlerRunner\(\) \{/);
  });

  it('starts the command it is sent, reports its pid and outcome, ends when disconnected', async () => {
    const { messages, code, output } = await exchange(helperArgs());
    expect(messages).toEqual(EXPECTED);
    expect(code).toBe(0);
    expect(output).toBe('');
  });
});
