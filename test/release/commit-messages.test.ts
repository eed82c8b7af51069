// The commit-message rule (commitlint.config.mjs, scripts/check-commits.mjs, docs/releasing.md): commitlint with
// the project's configuration refuses a subject semantic-release cannot read or longer than 72 characters and
// passes a conventional one; the check .ci/run runs looks only at the commits after the recorded base.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKED_AFTER, checkCommits, commitlint } from '../../scripts/check-commits.mjs';
import { tempDir } from '../helpers/tmp.js';

/**
 * commitlint on one message, from stdin, as `git commit` would hand it over; its colours (a CI runner may set
 * FORCE_COLOR) taken out of the text the tests read.
 */
function lint(message: string) {
  const cwd = tempDir('lint');
  const result = commitlint([], { cwd, input: message });
  return { status: result.status, output: stripVTControlCharacters(result.stdout + result.stderr) };
}

describe('commitlint with the project configuration', () => {
  it('refuses a subject without a type, naming the rules it breaks', () => {
    const subject = 'Fixed the integrator so that the final callbacks never wait on a hanging database';
    const { status, output } = lint(`${subject}\n`);
    expect(status).toBe(1);
    expect(output).toContain('[type-empty]');
    expect(output).toContain('[subject-empty]');
    expect(output).toContain(`current length is ${subject.length} [header-max-length]`);
  });

  it('refuses a conventional subject of 73 characters and passes one of 72, details in long body lines', () => {
    const subject72 = `fix(runtask): ${'x'.repeat(72 - 'fix(runtask): '.length)}`;
    expect(subject72).toHaveLength(72);
    const body = `\n\n${'A body line may hold figures, paths and links of any length. '.repeat(4)}\n`;
    expect(lint(`${subject72}${body}`)).toMatchObject({ status: 0 });
    const tooLong = lint(`${subject72}y${body}`);
    expect(tooLong.status).toBe(1);
    expect(tooLong.output).toContain('current length is 73 [header-max-length]');
  });
});

describe('scripts/check-commits.mjs', () => {
  const env = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'Commit Test',
    GIT_AUTHOR_EMAIL: 'commit-test@example.com',
    GIT_COMMITTER_NAME: 'Commit Test',
    GIT_COMMITTER_EMAIL: 'commit-test@example.com',
  };
  function git(cwd: string, ...args: string[]): string {
    const result = spawnSync('git', args, { cwd, env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
    return result.stdout.trim();
  }
  function commit(cwd: string, message: string): string {
    writeFileSync(path.join(cwd, 'file.txt'), `${message}\n`);
    git(cwd, 'add', 'file.txt');
    git(cwd, 'commit', '--quiet', '-m', message);
    return git(cwd, 'rev-parse', 'HEAD');
  }

  it('records a full commit id as the base', () => {
    expect(CHECKED_AFTER).toMatch(/^[0-9a-f]{40}$/);
  });

  it('checks only the commits after the base: old subjects pass unread, a new bad one fails', () => {
    const repo = tempDir('history');
    git(repo, 'init', '--quiet', '--initial-branch=main');
    commit(
      repo,
      'an old subject from before the rule, with no type and far longer than seventy-two characters',
    );
    const base = commit(repo, 'docs: the last commit before the rule');
    expect(checkCommits({ cwd: repo, base })).toEqual({
      status: 0,
      output: `check-commits: no commit after ${base.slice(0, 7)}\n`,
    });

    commit(repo, 'feat(cli): a new command');
    commit(repo, 'fix: a fix\n\nThe details, in the body.');
    const good = checkCommits({ cwd: repo, base });
    expect(good.status, good.output).toBe(0);
    expect(good.output).toContain(`the 2 commit message(s) after ${base.slice(0, 7)} follow the rule`);

    commit(repo, 'Made the thing work again');
    const bad = checkCommits({ cwd: repo, base });
    expect(bad.status).toBe(1);
    expect(bad.output).toContain('Made the thing work again');
    expect(bad.output).toContain('[type-empty]');
    expect(bad.output).not.toContain('an old subject from before the rule');
    expect(bad.output).toContain('reword it with git rebase -i');
  });

  it('passes the types semantic-release reads, plus bench, and refuses another', () => {
    const repo = tempDir('types');
    git(repo, 'init', '--quiet', '--initial-branch=main');
    const base = commit(repo, 'chore: start');
    for (const subject of [
      'feat(cli): versions list shows each version tag',
      'fix: the lock block keeps the platforms in order',
      'perf(publish): one read of every zip',
      'bench: figures on Node 24',
      'feat!: drop Node 20',
      'feature: versions list shows each version tag',
    ]) {
      commit(repo, subject);
    }
    const result = checkCommits({ cwd: repo, base });
    expect(result.status).toBe(1);
    // commitlint prints only the messages with a problem.
    expect(result.output.match(/--- input ---/g)).toHaveLength(1);
    expect(result.output).toContain('feature: versions list shows each version tag');
    expect(result.output).toContain('[type-enum]');
  });

  it('says so, with exit code 2, when the base is not in the history', () => {
    const repo = tempDir('foreign');
    git(repo, 'init', '--quiet', '--initial-branch=main');
    commit(repo, 'feat: something');
    const result = checkCommits({ cwd: repo, base: '0123456789abcdef0123456789abcdef01234567' });
    expect(result.status).toBe(2);
    expect(result.output).toContain("is not in this clone's history");
  });
});
