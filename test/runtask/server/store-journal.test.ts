/** The job-store contract (store.contract.ts) against the journal in a state dir (journal.ts). */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '../../../src/runtask/server/log.js';
import { Journal } from '../../../src/runtask/server/journal/journal.js';
import { Output } from '../../../src/ui/output.js';
import { Capture } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { describeJobStore } from './store.contract.js';

const log = EventLog.for(new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }));

describeJobStore({
  name: 'the journal',
  shared: false,
  fresh() {
    const dir = tempDir('state');
    return Promise.resolve({
      // The journal has no lease: its lock holds every job for as long as its process lives.
      open: () => Promise.resolve().then(() => Journal.open(dir, log)),
      dump: () =>
        Promise.resolve(
          readdirSync(dir)
            .map((name) => readFileSync(join(dir, name), 'utf8'))
            .join('\n'),
        ),
    });
  },
});

describeJobStore({
  name: 'the journal, synced (group commit)',
  shared: false,
  fresh() {
    const dir = tempDir('state-synced');
    return Promise.resolve({
      open: () => Promise.resolve().then(() => Journal.open(dir, log, { sync: true })),
      dump: () =>
        Promise.resolve(
          readdirSync(dir)
            .map((name) => readFileSync(join(dir, name), 'utf8'))
            .join('\n'),
        ),
    });
  },
});
