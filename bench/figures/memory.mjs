// Figure 3 — peak resident memory of `provider publish` (loopback, no limits) of a goreleaser-shaped release of
// 13 large executables: a guard, not a floor. Files are streamed from disk through fixed buffers and inflated
// through zlib's, so the peak must stay well under what holding a file would take; it does grow some with the
// files' size (the inflaters' output chunks come back to the system late), and the bare publisher alone, Node's
// fetch uploading one file at a time, already peaks above 150 MB (figure 8's rss rows), so the guard sits at
// 300 MB for 13 × 128 MiB.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { publishOnce } from '../lib/publish.mjs';
import { makeRelease } from '../lib/release.mjs';
import { limitRow } from '../lib/rows.mjs';
import { MiB } from '../lib/env.mjs';

const MB = 1e6;
/** The guard on publish's peak RSS, MB. */
const LIMIT_MB = 300;

/**
 * Measures figure 3; returns its row.
 * @param {{ work: string, sizeMiB: number, log: import('../lib/env.mjs').Log }} options
 */
export async function memoryFigure({ work, sizeMiB, log }) {
  const dir = path.join(work, `memory-${sizeMiB}`);
  log(`memory: generating 13 × ${sizeMiB} MiB`);
  const release = await makeRelease(dir, { version: '3.0.0', size: sizeMiB * MiB, shape: 'goreleaser' });
  log(`memory: provider publish of 13 × ${sizeMiB} MiB`);
  const run = await publishOnce({ work, release, peakRss: true, label: `publish-memory-${sizeMiB}` });
  fs.rmSync(dir, { recursive: true, force: true });
  return [
    limitRow({
      id: 'memory.large',
      figure: `publish peak RSS, 13 × ${sizeMiB} MiB executables, deflated`,
      ours: ((run.peakKiB ?? NaN) * 1024) / MB,
      unit: 'MB',
      limit: LIMIT_MB,
    }),
  ];
}
