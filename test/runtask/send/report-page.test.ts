/**
 * The preview page's text handling without a browser: every text the integrator sent has the run's secrets
 * hidden before it is escaped or rendered (an escaped `&` or a Markdown-rendered `*x*` would hide a secret from a
 * pass over the finished page), and `--report` into a folder that cannot be written is refused before anything
 * is sent.
 */
import { describe, expect, it } from 'vitest';
import { previewPage } from '../../../src/runtask/send/report.js';
import type { SessionRecord } from '../../../src/runtask/send/session.js';
import type { Verdict } from '../../../src/runtask/send/verdict.js';
import { runCli } from '../../helpers/cli.js';

const SECRET = 'k3y&<s3cr3t>*x*_y_';

function record(text: string): SessionRecord {
  return {
    startedAt: 0,
    endedAt: 10,
    platformUrl: 'http://127.0.0.1:1',
    issued: { taskResultId: 'taskrs-1', stage: 'post_plan', enforcement: 'mandatory', outcomesOffered: true },
    bytes: 1,
    signed: true,
    accepted: true,
    events: [{ kind: 'warning', at: 5, message: `the handler said ${text}` }],
    taskStatus: 'failed',
    taskMessage: `message ${text}`,
    taskUrl: undefined,
    outcomes: [
      {
        id: `id-${text}`,
        description: `description ${text}`,
        body: `body ${text} and **${text}**`,
        tags: { Severity: [{ label: `label ${text}`, level: 'error' }] },
      },
    ],
    end: 'settled',
  } as unknown as SessionRecord;
}

const verdict = { result: 'failed', summary: 'PASS', exitCode: 0 } as unknown as Verdict;
const windows = { progressWindow: '10m', maxDuration: '60m' };
const redact = (text: string): string => text.split(SECRET).join('***');

describe('the preview page and secrets', () => {
  it('hides a secret with HTML and Markdown characters in every field, escaped or rendered', () => {
    const html = previewPage(record(SECRET), verdict, windows, redact);
    for (const form of [SECRET, 'k3y&amp;&lt;s3cr3t&gt;', 's3cr3t', '<em>x</em>'])
      expect(html).not.toContain(form);
    expect(html.match(/\*\*\*/g)!.length).toBeGreaterThanOrEqual(6);
    // Without the redaction the same page shows it, escaped: the test above can fail.
    expect(previewPage(record(SECRET), verdict, windows)).toContain('k3y&amp;&lt;s3cr3t&gt;');
  });

  it('--report into a folder that does not exist is exit 2 before anything is sent', async () => {
    const result = await runCli(
      ['runtask', 'send', 'http://127.0.0.1:1/', '--report', '/nonexistent/folder/page.html'],
      {
        env: { RUNTASK_HMAC_KEY: 'k' },
      },
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      '--report /nonexistent/folder/page.html: the folder /nonexistent/folder does not exist',
    );
    expect(result.stdout).not.toContain('request');
  });
});
