/** The table renderer and the confirmation prompt (driven through @inquirer/prompts on fake streams). */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { Output } from '../../src/ui/output.js';
import { inquirerConfirm } from '../../src/ui/prompt.js';
import { printTable, renderTable } from '../../src/ui/table.js';
import { Capture } from '../helpers/cli.js';

describe('renderTable', () => {
  const headers = ['NAME', 'SIZE', 'NOTE'];
  const rows = [
    ['a', '1', ''],
    ['longer', '1000', 'x'],
  ];

  it('aligns columns under a header, right-aligning the ones asked, without trailing spaces', () => {
    expect(renderTable(headers, rows, { aligned: true, alignRight: [1] })).toEqual([
      'NAME    SIZE  NOTE',
      'a          1',
      'longer  1000  x',
    ]);
  });

  it('prints tab-separated rows without a header otherwise', () => {
    expect(renderTable(headers, rows, { aligned: false })).toEqual(['a\t1\t', 'longer\t1000\tx']);
  });

  it('follows the sink: aligned on a terminal, rows in a pipe or in CI', () => {
    const print = (tty: boolean, env: Record<string, string> = {}) => {
      const stdout = new Capture(tty);
      printTable(
        new Output({ stdout, stderr: new Capture(tty), env: { NO_COLOR: '1', ...env } }),
        headers,
        rows,
      );
      return stdout.text;
    };
    expect(print(true)).toBe('NAME    SIZE  NOTE\na       1\nlonger  1000  x\n');
    expect(print(false)).toBe('a\t1\t\nlonger\t1000\tx\n');
    expect(print(true, { CI: 'true' })).toBe('a\t1\t\nlonger\t1000\tx\n');
  });
});

describe('inquirerConfirm', () => {
  function streams() {
    const input = new PassThrough();
    const output = new PassThrough();
    let drawn = '';
    output.on('data', (chunk: Buffer) => (drawn += chunk.toString('utf8')));
    return { input, output, drawn: () => drawn };
  }

  it('answers no on Enter (the default) and yes on y', async () => {
    const a = streams();
    const pending = inquirerConfirm(a)('Delete it?', { default: false });
    setImmediate(() => a.input.write('\r'));
    await expect(pending).resolves.toBe(false);
    expect(a.drawn()).toContain('Delete it?');
    expect(a.drawn()).toContain('(y/N)');

    const b = streams();
    const yes = inquirerConfirm(b)('Delete it?');
    setImmediate(() => b.input.write('y\r'));
    await expect(yes).resolves.toBe(true);
  });

  it('turns an abort into an InterruptedError', async () => {
    const a = streams();
    const controller = new AbortController();
    const pending = inquirerConfirm(a)('Delete it?', { signal: controller.signal });
    setImmediate(() => controller.abort());
    await expect(pending).rejects.toBeInstanceOf(InterruptedError);
  });
});
