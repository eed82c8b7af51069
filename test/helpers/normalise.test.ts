/**
 * The snapshot normaliser (normalise.ts): it replaces what differs between runs (ports, tempDir folders,
 * timestamps, measured durations, made-up ids), keeps everything that is the same every run (key ids, hashes,
 * file names, configured timeouts), and refuses a signed archivist link.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalise } from './normalise.js';
import { tempDir } from './tmp.js';

describe('normalise', () => {
  it('replaces loopback ports, tempDir folders, timestamps, durations and made-up ids', () => {
    const dir = tempDir('data');
    const text = [
      'source     http://127.0.0.1:41234/example-org/example and localhost:8080',
      `data       ${path.join(dir, 'state.json')}`,
      'created    2026-11-23T18:15:18.719Z, updated 2026-11-23T18:15:19+01:00',
      '✓ published in 1.23s; answer 200 after 340ms; took 2m 05s',
      'id         provver-a1B2c3D4e5F6g7H8, task result taskrs-0123456789abcdef',
    ].join('\n');
    expect(normalise(text)).toBe(
      [
        'source     http://127.0.0.1:<port>/example-org/example and localhost:<port>',
        'data       <tmp>/state.json',
        'created    <time>, updated <time>',
        '✓ published in <duration>; answer 200 after <duration>; took <duration>',
        'id         provver-<id>, task result taskrs-<id>',
      ].join('\n'),
    );
  });

  it('takes a label with six-letter words of its own whole: only the last part is the random one', () => {
    const dir = tempDir('release-folder-shapes');
    expect(normalise(`read ${path.join(dir, 'dist')}`)).toBe('read <tmp>/dist');
  });

  it('keeps what every run prints the same', () => {
    const text = [
      'key id     47D8C49E6154CCB3 (RSA 3072)',
      'linux_amd64  terraform-provider-example_1.2.3_linux_amd64.zip  2.2 KiB  bd7aeba4436e',
      `shasum     ${'ab'.repeat(32)}`,
      'retried after 1 attempt; --timeout 10s, --wait-timeout 10m; version 1.2.3 on 10.0.0.1:443',
      '/tmp/not-a-temp-dir-of-ours/file',
    ].join('\n');
    expect(normalise(text)).toBe(text);
  });

  it('refuses a signed archivist link, and lets the redacted one of the request log through', () => {
    expect(() => normalise('GET http://127.0.0.1:1234/_archivist/v1/object/c2hhc3Vtcw.sig')).toThrow(
      /signed archivist link/,
    );
    expect(normalise('PUT /_archivist/v1/object/[secret]')).toBe('PUT /_archivist/v1/object/[secret]');
  });
});
