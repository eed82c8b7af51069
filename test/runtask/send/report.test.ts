/**
 * `runtask send --report`: the preview page of a task result, opened in headless Chromium (Debian's, driven by
 * playwright-core). A real `runtask serve` runs a handler whose outcomes hold hostile Markdown; the page must show
 * the status, the message and the outcomes with their tags' levels, open an outcome on a click, never run the
 * handler's script or load anything from the network, and it is screenshotted (PROVIDER_UPDATE_DOCS=1 writes the
 * picture docs/runtask.md shows: docs/images/runtask-preview.png).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../helpers/chromium.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { ensureBuilt } from '../../helpers/spawn-cli.js';
import { tempRoot } from '../../helpers/tmp.js';
import { freePort, sendCli } from './helpers.js';

const KEY = 'report-test-hmac-key';
const RESULT = {
  status: 'failed',
  message: '1 error, 1 warning in checkov (fails on error)',
  url: 'https://checks.example.com/r/42',
  outcomes: [
    {
      id: 'CKV_AWS_20-3f2a9c1b',
      description: 'S3 bucket aws_s3_bucket.logs allows public READ access',
      body: [
        '**CKV_AWS_20** (checkov)',
        '',
        '- `main.tf:12`',
        '',
        'Set `acl = "private"`, see [the policy](https://docs.example.com/CKV_AWS_20).',
        '',
        '<script>document.title = "pwned"; window.pwned = true;</script>',
        '',
        '<img src="https://tracker.example.com/pixel.png" onerror="window.pwned = true">',
        '',
        '[click me](javascript:window.pwned=true)',
      ].join('\n'),
      url: 'https://docs.example.com/CKV_AWS_20',
      tags: { Severity: [{ label: 'High', level: 'error' }], Status: [{ label: 'Failed', level: 'error' }] },
    },
    {
      id: 'CKV_AWS_18-77aa0e12',
      description: 'Access logging is not enabled',
      tags: {
        Severity: [{ label: 'Medium', level: 'warning' }],
        Team: [{ label: 'platform' }],
        Status: [{ label: 'Open', level: 'info' }],
      },
    },
  ],
};

/** What these checks read from the page's window (the project's types hold no DOM). */
interface BrowserGlobals {
  getComputedStyle(element: unknown): { backgroundColor: string };
  pwned?: boolean;
}

let serve: ChildProcess;
let browser: Browser;
let page = '';
let sendExit = -1;

beforeAll(async () => {
  ensureBuilt();
  const dir = tempRoot('report');
  const handler = path.join(dir, 'handler.mjs');
  fs.writeFileSync(handler, `process.stdout.write(${JSON.stringify(JSON.stringify(RESULT))});\n`);
  const platformPort = await freePort();
  serve = spawn(
    process.execPath,
    [
      path.join(REPO_ROOT, 'bin', 'provider.cjs'),
      ...['runtask', 'serve', '--port', '0', '--json', '--state-dir', path.join(dir, 'state')],
      ...['--exec', `${process.execPath} ${handler}`, '--platform-host', `http://127.0.0.1:${platformPort}`],
    ],
    { cwd: dir, env: { PATH: process.env.PATH, RUNTASK_HMAC_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]!) as { url: string }).url);
    });
    serve.on('exit', (code) => reject(new Error(`runtask serve exited (${code})`)));
  });
  page = path.join(dir, 'report.html');
  const sent = await sendCli(url, platformPort, ['--expect', 'failed', '--report', page], {
    RUNTASK_HMAC_KEY: KEY,
  });
  sendExit = sent.exitCode;
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  serve?.kill('SIGTERM');
  await browser?.close();
});

describe('runtask send --report', () => {
  it('writes the page whatever the verdict, with no script and a policy that forbids scripts and network loads', () => {
    expect(sendExit).toBe(0);
    const html = fs.readFileSync(page, 'utf8');
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    );
    expect(html).not.toMatch(/<script|onerror=|javascript:window|<img/i);
  });

  it('in Chromium: status, message, outcomes with their tag levels; a click opens an outcome; nothing runs or loads', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const tab = await context.newPage();
    const requests: string[] = [];
    tab.on('request', (request) => requests.push(request.url()));
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(`file://${page}`);

    expect(await tab.locator('.status').getAttribute('data-status')).toBe('failed');
    expect(await tab.locator('.message').textContent()).toBe(RESULT.message);
    expect(await tab.locator('details.outcome').count()).toBe(2);
    expect(await tab.locator('#outcomes h2').textContent()).toBe('Outcomes (2)');

    // Tags shown with their levels: colour class, icon, and the level's name for assistive technology.
    const first = tab.locator('details.outcome').first();
    const severity = first.locator('[data-tag="Severity"] .tag');
    expect(await severity.getAttribute('data-level')).toBe('error');
    expect(await severity.textContent()).toBe('✖ High (error)');
    const colour = await severity.evaluate(
      (el) => (globalThis as unknown as BrowserGlobals).getComputedStyle(el).backgroundColor,
    );
    expect(colour).toBe('rgb(255, 235, 233)');
    const second = tab.locator('details.outcome').nth(1);
    expect(
      await second
        .locator('.tag-group')
        .evaluateAll((els) =>
          els.map((el) => (el as { getAttribute(name: string): string | null }).getAttribute('data-tag')),
        ),
    ).toEqual(['Severity', 'Status', 'Team']);
    expect(await second.locator('[data-tag="Severity"] .tag').getAttribute('data-level')).toBe('warning');
    expect(await second.locator('[data-tag="Team"] .tag').getAttribute('data-level')).toBe('none');

    // Closed until clicked, then the Markdown body is there, rendered.
    const body = first.locator('.body');
    expect(await body.isVisible()).toBe(false);
    await first.locator('summary').click();
    expect(await first.evaluate((el) => (el as { open?: boolean }).open)).toBe(true);
    expect(await body.isVisible()).toBe(true);
    expect(await body.locator('strong').first().textContent()).toBe('CKV_AWS_20');
    expect(
      await body.locator('a[href="https://docs.example.com/CKV_AWS_20"]').first().getAttribute('rel'),
    ).toBe('noopener noreferrer');

    // The handler's script did not run, its image did not load, its javascript: link is no link.
    expect(await tab.title()).toMatch(/^Run task failed: /);
    expect(await tab.evaluate(() => (globalThis as unknown as BrowserGlobals).pwned)).toBeUndefined();
    expect(await tab.locator('img').count()).toBe(0);
    expect(await tab.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(errors).toEqual([]);
    expect(requests.filter((url) => !url.startsWith('file://'))).toEqual([]);

    const shot = await tab.screenshot({ fullPage: true });
    expect(shot.subarray(1, 4).toString('latin1')).toBe('PNG');
    if (process.env.PROVIDER_UPDATE_DOCS === '1') {
      fs.writeFileSync(path.join(REPO_ROOT, 'docs', 'images', 'runtask-preview.png'), shot);
    }
    await context.close();
  });
});
