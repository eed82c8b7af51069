/**
 * What a killed emulator leaves in its data folder: a write of the state cut short leaves its temp file
 * (src/atomicWrite.ts names it `.state.json.<12 hex>.tmp`); the next start removes it and keeps everything else.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { tempDir } from '../helpers/tmp.js';

describe('an emulator started on a data folder a kill left', () => {
  it('removes the state writes cut short, and only them', async () => {
    const dataDir = tempDir('data');
    const first = await startEmulator({ dataDir });
    await first.close();
    const leftover = join(dataDir, '.state.json.0123456789ab.tmp');
    const mine = join(dataDir, 'notes.tmp');
    fs.writeFileSync(leftover, '{"schema":');
    fs.writeFileSync(mine, 'kept');
    const second = await startEmulator({ dataDir });
    await second.close();
    expect(fs.existsSync(leftover)).toBe(false);
    expect(fs.readFileSync(mine, 'utf8')).toBe('kept');
    expect(fs.existsSync(join(dataDir, 'state.json'))).toBe(true);
  });
});
