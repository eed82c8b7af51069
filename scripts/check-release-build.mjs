// The release's last prepare step (release.config.mjs, after `npm run build:action` and `npm run build:binary`):
// refuses the release, before anything is committed, tagged or published, when what it is about to commit and
// attach does not carry the version semantic-release decided. Usage, from the repository root:
//   node scripts/check-release-build.mjs VERSION
// Checks that package.json says VERSION, that the action bundle action/main.cjs is there, and that this
// machine's binary (build/provider-<platform>-<arch>, .exe on Windows) prints VERSION for --version.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

const version = process.argv[2];
if (!version) {
  console.error('usage: node scripts/check-release-build.mjs VERSION');
  process.exit(2);
}

/** @type {string[]} */
const problems = [];
/** @returns {unknown} */
const readPackageJson = () => JSON.parse(readFileSync('package.json', 'utf8'));
const pkg = /** @type {{ version?: unknown }} */ (readPackageJson());
if (pkg.version !== version) {
  problems.push(`package.json says version ${String(pkg.version)}, not ${version}`);
}
if (!existsSync('action/main.cjs') || statSync('action/main.cjs').size === 0) {
  problems.push('action/main.cjs is missing or empty: npm run build:action did not write it');
}
const binary = `build/provider-${process.platform}-${process.arch}${process.platform === 'win32' ? '.exe' : ''}`;
if (!existsSync(binary)) {
  problems.push(`${binary} is missing: npm run build:binary did not write it`);
} else {
  try {
    const printed = execFileSync(resolve(binary), ['--version'], {
      encoding: 'utf8',
      timeout: 60_000,
    }).trim();
    if (printed !== version)
      problems.push(`${binary} --version printed ${JSON.stringify(printed)}, not ${version}`);
  } catch (error) {
    problems.push(`${binary} --version failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

for (const problem of problems) console.error(`check-release-build: ${problem}`);
if (problems.length > 0) process.exit(1);
console.log(`check-release-build: package.json, action/main.cjs and ${binary} carry ${version}`);
