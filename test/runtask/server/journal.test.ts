/**
 * The journal file itself (journal.ts), beyond the job-store contract (store-journal.test.ts): a finished job's
 * lines are blanked in place, the file is rewritten once the blanks outweigh the live records and emptied when no
 * job is left, lines that are not records are set aside at the start, and a file removed under the open journal is
 * noticed by the next write.
 */
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog, type LogEvent } from '../../../src/runtask/server/log.js';
import { JOURNAL_FILE, Journal } from '../../../src/runtask/server/journal/journal.js';
import { Output } from '../../../src/ui/output.js';
import { Capture } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { journaled, journaledIds } from '../helpers.js';
import { recordOf } from './store.contract.js';

function logWithEvents(): { log: EventLog; events: LogEvent[] } {
  const log = EventLog.for(new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }));
  const events: LogEvent[] = [];
  log.subscribe((event) => events.push(event));
  return { log, events };
}

describe('the journal file', () => {
  it('blanks a finished job in place, keeps the others, and is emptied when no job is left', async () => {
    const dir = tempDir('blank');
    const journal = Journal.open(dir, logWithEvents().log);
    const [a, b] = [recordOf('blank-a'), recordOf('blank-b')];
    expect(await journal.accept(a)).toBe('accepted');
    expect(await journal.accept(b)).toBe('accepted');
    const file = join(dir, JOURNAL_FILE);
    const size = statSync(file).size;
    await journal.finish(a.id);
    // Same size: a's line is spaces now, and its token is gone.
    expect(statSync(file).size).toBe(size);
    expect(readFileSync(file, 'utf8')).not.toContain(String(a.request.access_token));
    expect(journaledIds(dir)).toEqual([b.id]);
    await journal.finish(b.id);
    expect(readFileSync(file, 'utf8')).toBe('');
    await journal.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('rewrites the file without the blanks once they outweigh the live records', async () => {
    const dir = tempDir('compact');
    const journal = Journal.open(dir, logWithEvents().log);
    // Records of about 1 KiB: 1,200 of them, then all but 100 finished, make over 1 MiB of blanks.
    const records = Array.from({ length: 1200 }, (_, i) => {
      const record = recordOf(`compact-${i}`);
      return { ...record, request: { ...record.request, padding: 'x'.repeat(900) } };
    });
    expect(await Promise.all(records.map((r) => journal.accept(r)))).toEqual(records.map(() => 'accepted'));
    const file = join(dir, JOURNAL_FILE);
    const full = statSync(file).size;
    for (const record of records.slice(100)) await journal.finish(record.id);
    expect(statSync(file).size).toBeLessThan(full / 2);
    expect(journaledIds(dir)).toEqual(
      records
        .slice(0, 100)
        .map((r) => r.id)
        .sort(),
    );
    // It keeps appending where the rewritten file ends.
    const late = recordOf('compact-late');
    expect(await journal.accept(late)).toBe('accepted');
    expect(journaled(dir).get(late.id)).toEqual(late);
    await journal.release({ crash: true });
    const next = Journal.open(dir, logWithEvents().log);
    expect((await next.takeOver()).map((r) => r.id).sort()).toEqual(
      [...records.slice(0, 100).map((r) => r.id), late.id].sort(),
    );
    await next.release();
  });

  it('sets aside lines that are not records (a torn last line included) and recovers the others', async () => {
    const dir = tempDir('torn');
    const good = recordOf('torn-good');
    const reporting = { ...good, phase: 'reporting', result: { status: 'passed', message: 'fine' } };
    const text = [
      JSON.stringify(good),
      '{"version":1,"id":"torn-bad","phase":"finished"}',
      ' '.repeat(20),
      JSON.stringify(reporting),
      JSON.stringify(recordOf('torn-cut')).slice(0, 50),
    ].join('\n');
    writeFileSync(join(dir, JOURNAL_FILE), text, { mode: 0o600 });
    const { log, events } = logWithEvents();
    const journal = Journal.open(dir, log);
    expect(await journal.takeOver()).toEqual([reporting]);
    const aside = events.find((e) => e.event === 'journal.set_aside')!;
    expect(aside.fields).toMatchObject({ file: JOURNAL_FILE });
    expect(String(aside.fields.reason)).toMatch(/^2 line\(s\) that are not job records/);
    const moved = readFileSync(join(dir, String(aside.fields.moved_to)), 'utf8');
    expect(moved).toContain('torn-bad');
    expect(statSync(join(dir, String(aside.fields.moved_to))).mode & 0o777).toBe(0o600);
    // The file was rewritten with the one live record.
    expect([...journaled(dir).values()]).toEqual([reporting]);
    await journal.release({ crash: true });
  });

  it('notices a journal file removed under it at the next write, and writes every live record again', async () => {
    const dir = tempDir('removed');
    const { log, events } = logWithEvents();
    const journal = Journal.open(dir, log);
    const first = recordOf('removed-first');
    expect(await journal.accept(first)).toBe('accepted');
    rmSync(join(dir, JOURNAL_FILE));
    const second = recordOf('removed-second');
    expect(await journal.accept(second)).toBe('accepted');
    expect(events.map((e) => e.event)).toEqual(['journal.failed', 'journal.restored']);
    expect(events[0]!.fields).toMatchObject({ code: 'ENOENT' });
    expect(journaledIds(dir)).toEqual([first.id, second.id].sort());
    expect(journal.health()).toMatchObject({ status: 'ok', problems: 1, unsaved: 0 });
    await journal.release();
  });
});
