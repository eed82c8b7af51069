/**
 * The PostgreSQL store's defences against a database that hangs or is briefly gone: node-postgres's own
 * timeouts from the options, a statement that counts as overdue while it waits, and writes tried again until
 * they report done.
 */
import { describe, expect, it } from 'vitest';
import {
  Retries,
  StatementWatch,
  poolSettings,
} from '../../../src/runtask/server/postgres/databaseFaults.js';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe('the pool settings', () => {
  it('are node-postgres’s own: statement, connect and keep-alive, from the options or their defaults', () => {
    expect(poolSettings({})).toMatchObject({
      query_timeout: 10_000,
      statement_timeout: 10_000,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
    });
    expect(poolSettings({ statementTimeoutMs: 1500, connectTimeoutMs: 700 })).toMatchObject({
      query_timeout: 1500,
      statement_timeout: 1500,
      connectionTimeoutMillis: 700,
    });
  });
});

describe('the statement watch', () => {
  it('says overdue (once per statement) while one waits longer than its limit, and no more once it answered', async () => {
    let overdue = 0;
    const watch = new StatementWatch(1, () => overdue++);
    let answer!: (value: string) => void;
    const running = watch.run(() => new Promise<string>((resolve) => (answer = resolve)));
    while (!watch.overdue() || overdue === 0) await tick();
    expect(overdue).toBe(1);
    answer('rows');
    expect(await running).toBe('rows');
    expect(watch.overdue()).toBe(false);
    // A statement that fails is let go as well.
    await expect(watch.run(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(watch.overdue()).toBe(false);
  });
});

describe('the retries', () => {
  it('try each write again until it reports done (a throw counts as not done); stop ends the rounds', async () => {
    const retries = new Retries(1);
    let tries = 0;
    retries.add('job-1', () => {
      tries++;
      if (tries === 2) return Promise.reject(new Error('still down'));
      return Promise.resolve(tries >= 3);
    });
    expect(retries.has('job-1')).toBe(true);
    while (retries.has('job-1')) await tick();
    expect(tries).toBe(3);

    let later = 0;
    retries.add('job-2', () => Promise.resolve(++later > 100));
    retries.stop();
    await retries.flush();
    expect(later).toBe(1);
    expect(retries.keys()).toEqual(['job-2']);
  });
});
