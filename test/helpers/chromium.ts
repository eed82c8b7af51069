/**
 * Debian's Chromium for the tests that open a page in a real browser, driven by playwright-core (which never
 * downloads a browser of its own). `.ci/run` installs the package; on a fresh machine where it is missing the
 * first such test installs it the same way when it can (root with apt-get), else fails saying how to install it.
 * CHROMIUM_PATH names another Chromium. Launched with the flags this workplace's closed network needs (no
 * background networking, component updates or sync: their connections would be refused).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** The Chromium executable, installed from Debian's packages first when missing and possible. */
export function chromiumPath(): string {
  const given = process.env.CHROMIUM_PATH;
  if (given !== undefined && given !== '') return given;
  if (fs.existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  if (process.getuid?.() === 0 && fs.existsSync('/usr/bin/apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { env, stdio: 'ignore' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { env, stdio: 'ignore' });
    if (fs.existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  }
  throw new Error(
    `This test opens a page in Chromium (${DEBIAN_CHROMIUM}): install it (apt-get install chromium), ` +
      'or set CHROMIUM_PATH to a Chromium executable.',
  );
}

/** A headless Chromium (playwright gives it a fresh temporary profile). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
