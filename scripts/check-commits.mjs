#!/usr/bin/env node
// Checks the messages of the commits made since the commit-message rule exists (commitlint.config.mjs,
// docs/releasing.md "Commit messages"): conventional subjects of at most 72 characters, which semantic-release
// reads to pick the next version. The history up to CHECKED_AFTER was written before the rule and cannot be
// rewritten, so only the commits after it (`CHECKED_AFTER..HEAD`) are checked. .ci/run runs it. Usage, from the
// repository root:
//   node scripts/check-commits.mjs [--base <commit>]
// --base checks the commits after another commit instead (e.g. origin/main, to check only a branch's own).
// Exit codes: 0 every message passes, 1 a message breaks a rule (commitlint names the commit and the rule),
// 2 not a git repository, or the base commit is not in this clone's history.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** main's last commit before the rule (4459a85): every commit after it is checked. */
export const CHECKED_AFTER = '4459a85bc6627f3e9040352642b5ef01b5001265';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CONFIG = path.join(ROOT, 'commitlint.config.mjs');

/**
 * @param {string} cwd
 * @param {string[]} args
 */
function git(cwd, ...args) {
  return spawnSync('git', args, { cwd, encoding: 'utf8' });
}

/**
 * The commitlint command line (its `commitlint` bin) with this project's configuration.
 * @param {string[]} args
 * @param {{ cwd: string, input?: string }} options
 */
export function commitlint(args, { cwd, input }) {
  const cli = path.join(
    path.dirname(createRequire(import.meta.url).resolve('@commitlint/cli/package.json')),
    'cli.js',
  );
  return spawnSync(process.execPath, [cli, '--config', CONFIG, ...args], {
    cwd,
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
  });
}

/**
 * Checks the commits after `base` up to HEAD in the repository at `cwd`. In a shallow clone (CI's checkout) that
 * lacks the base, the history is fetched first.
 * @param {{ cwd?: string, base?: string }} [options]
 * @returns {{ status: number, output: string }}
 */
export function checkCommits({ cwd = ROOT, base = CHECKED_AFTER } = {}) {
  if (git(cwd, 'rev-parse', '--git-dir').status !== 0) {
    return { status: 2, output: `check-commits: ${cwd} is not a git repository: run it in a clone\n` };
  }
  const has = () => git(cwd, 'cat-file', '-e', `${base}^{commit}`).status === 0;
  if (!has() && git(cwd, 'rev-parse', '--is-shallow-repository').stdout.trim() === 'true') {
    git(cwd, 'fetch', '--quiet', '--unshallow');
  }
  if (!has()) {
    return {
      status: 2,
      output:
        `check-commits: commit ${base} (the last one before the commit-message rule) is not in this clone's ` +
        'history: clone the whole history (git fetch --unshallow), or pass --base <commit>.\n',
    };
  }
  const count = Number(git(cwd, 'rev-list', '--count', `${base}..HEAD`).stdout.trim());
  if (count === 0) return { status: 0, output: `check-commits: no commit after ${base.slice(0, 7)}\n` };
  const result = commitlint(['--from', base, '--to', 'HEAD'], { cwd });
  const verdict =
    result.status === 0
      ? `check-commits: the ${count} commit message(s) after ${base.slice(0, 7)} follow the rule\n`
      : `check-commits: a commit message after ${base.slice(0, 7)} breaks the rule (above; docs/releasing.md, ` +
        '"Commit messages"): reword it with git rebase -i before it is merged\n';
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}${verdict}` };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { base: { type: 'string' } } });
  const { status, output } = checkCommits(values.base === undefined ? {} : { base: values.base });
  process.stdout.write(output);
  process.exit(status);
}
