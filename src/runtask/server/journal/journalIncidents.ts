/**
 * The incidents of one journal while it serves: whether it is failing, how many incidents there were, the last
 * problem (what /healthz reports), and whether another integrator took its state dir. The first failure of an
 * incident is logged and counted; later ones only update the last problem until the journal works again.
 */
import type { EventLog } from '../log.js';
import type { StoreHealth, StoreProblem } from '../store.js';

/** The failures of one journal. */
export class JournalIncidents {
  /** Records cannot be written now: new jobs are refused. */
  failing = false;
  /** The pid of another live integrator that took the state dir after it was removed: never written again. */
  takenBy: number | undefined;
  private problems = 0;
  lastProblem: StoreProblem | undefined;

  constructor(
    private readonly dir: string,
    private readonly log: EventLog,
  ) {}

  /** Notes a failure (`code`, while doing `what`); the first of an incident is logged and counted. */
  failed(code: string, what: string, jobs: number): void {
    this.lastProblem = { at: new Date().toISOString(), code, message: `${what}: ${code}` };
    if (this.failing) return;
    this.failing = true;
    this.problems++;
    this.log.error('journal.failed', `the journal in ${this.dir} failed: ${what}: ${code}`, {
      code,
      state_dir: this.dir,
      jobs,
    });
  }

  /** Notes that the integrator `pid` took the state dir: the journal fails for good, and says so once. */
  taken(pid: number, jobs: number): void {
    this.takenBy = pid;
    this.failing = true;
    this.problems++;
    this.lastProblem = {
      at: new Date().toISOString(),
      code: 'ETAKEN',
      message: `the state dir is now held by another integrator (pid ${pid})`,
    };
    this.log.error(
      'journal.taken',
      `another integrator (pid ${pid}) took the state dir ${this.dir} while it was gone: this one stops journaling; restart it with its own --state-dir`,
      { state_dir: this.dir, pid, jobs },
    );
  }

  /** Notes a repair that worked: the end of an incident, if one was going on. */
  restored(recreated: boolean, records: number, jobs: number): void {
    if (!this.failing) return;
    this.failing = false;
    this.log.info(
      'journal.restored',
      `the journal in ${this.dir} works again${recreated ? ' (folder re-created)' : ''}; re-wrote ${records} job record(s)`,
      { state_dir: this.dir, recreated, records, jobs },
    );
  }

  /** What /healthz reports. */
  health(unsaved: number): StoreHealth {
    return {
      status: this.failing ? 'failing' : 'ok',
      problems: this.problems,
      ...(this.lastProblem === undefined ? {} : { lastProblem: this.lastProblem }),
      unsaved,
    };
  }
}
