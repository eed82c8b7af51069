/**
 * `provider emulate --ranges`: a download link answers one byte range as object storage does (RFC 9110 §14):
 * `bytes=a-b` and `bytes=-n` (a suffix longer than the file is the whole file) with 206 and a Content-Range, a
 * range past the end with 416, several ranges or a malformed header with the whole file (200). Without the option
 * (the platform documents no ranges) every download is the whole file, whatever it asks.
 */
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { call, emulatorPerTest, loadRelease, publishFixture } from '../helpers/emulator/index.js';

const emulator = emulatorPerTest();

/** The linux_amd64 zip's download link in `e`, and its bytes. */
async function zipLink(e: Emulator): Promise<{ link: string; bytes: Buffer }> {
  await publishFixture(e, { platforms: ['linux_amd64'], uploads: ['sums', 'sig', 'linux_amd64'] });
  const path = `/api/registry/v1/providers/${e.organization}/example/1.2.3/download/linux/amd64`;
  const doc = (await call(e.url, 'GET', path, { token: e.ownerToken })).json as { download_url: string };
  return { link: doc.download_url, bytes: loadRelease().zip('linux', 'amd64').bytes };
}

const get = (link: string, range: string) => call('', 'GET', link, { headers: { accept: '*/*', range } });

describe('the emulator’s download links and byte ranges', () => {
  it('with --ranges: one range is 206 with its Content-Range, past the end 416, several the whole file', async () => {
    const e = await emulator({ ranges: true });
    const { link, bytes } = await zipLink(e);
    const size = bytes.length;

    const middle = await get(link, 'bytes=10-19');
    expect(middle.status).toBe(206);
    expect(middle.headers.get('content-range')).toBe(`bytes 10-19/${size}`);
    expect(middle.bytes.equals(bytes.subarray(10, 20))).toBe(true);

    const tail = await get(link, 'bytes=-22');
    expect(tail.status).toBe(206);
    expect(tail.bytes.equals(bytes.subarray(size - 22))).toBe(true);

    const longer = await get(link, `bytes=-${size * 4}`);
    expect([longer.status, longer.headers.get('content-range')]).toEqual([
      206,
      `bytes 0-${size - 1}/${size}`,
    ]);
    expect(longer.bytes.equals(bytes)).toBe(true);

    const past = await get(link, `bytes=${size + 10}-`);
    expect([past.status, past.headers.get('content-range')]).toEqual([416, `bytes */${size}`]);

    for (const whole of ['bytes=0-1,5-6', 'bytes=x-y', 'items=0-1']) {
      const answer = await get(link, whole);
      expect([whole, answer.status]).toEqual([whole, 200]);
      expect(answer.bytes.equals(bytes)).toBe(true);
    }
  });

  it('without it: every download is the whole file, with no Accept-Ranges', async () => {
    const e = await emulator();
    const { link, bytes } = await zipLink(e);
    const answer = await get(link, 'bytes=10-19');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('accept-ranges')).toBeNull();
    expect(answer.bytes.equals(bytes)).toBe(true);
  });
});
