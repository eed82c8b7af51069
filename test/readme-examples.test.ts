/**
 * The README's command lines run as written. Every command of its shell blocks (`sh`, `console`) is listed in
 * `expected` below with what it needs and the exit code it must end with, or as skipped with the reason: a line
 * added to the README and not listed here fails, and so does an entry whose line left the README. The lines run
 * through bash, with `provider` on the PATH as the built program, in a project folder holding `dist/` (the fixture
 * release), `signing-key.asc` (its signer's public key), `fixtures/` and `check-plan.sh` (a handler that passes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeBlocks } from './helpers/markdown.js';
import { tempDir, tempRoot } from './helpers/tmp.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** What one command line of the README needs, and how it must end. */
type Expected =
  /** Runs on local files only: no registry, no token. */
  | { local: number }
  /**
   * Targets the registry of `--organization my-org`: run against an emulator of that organization, reached the
   * way a user reaches another host, through TFE_HOSTNAME and TFE_TOKEN in the environment.
   */
  | { registry: number }
  /** A server: it must start listening, then end with exit 0 on SIGTERM. `env` is what the block exported. */
  | { serves: true; env?: Record<string, string> }
  /** A block whose lines depend on each other (a variable exported, a server in the background): one script. */
  | { script: number }
  | { skip: string };

// In README order: the lines run in this order, so the publish comes before the reads and the deletes after them.
const expected: Record<string, Expected> = {
  'provider publish ./dist --organization my-org --key signing-key.asc   # verify, upload what is missing, wait, check':
    { registry: 0 },
  'provider check 1.2.3 --organization my-org                           # what terraform init will say about a version':
    { registry: 0 },
  'provider runtask serve --exec ./check-plan.sh                         # any command as a run task': {
    serves: true,
  },
  'provider emulate                                                      # the platform on your laptop': {
    serves: true,
  },
  'npx provider-registry-cli verify ./dist            # run once, without installing': {
    skip: 'npx fetches the package from the npm registry; test/install/package.test.ts runs the packed package',
  },
  'npm install -g provider-registry-cli               # or put `provider` on your PATH': {
    skip: 'installs from the npm registry into the machine-wide prefix',
  },
  'provider --version': { local: 0 },
  'curl -fsSLo provider https://github.com/provider-cli/provider/releases/download/v1.4.0/provider-linux-x64':
    {
      skip: 'downloads from a GitHub release; test/install/ builds and runs the single executable',
    },
  'chmod +x provider && ./provider --version': {
    skip: 'runs the single executable the line before downloads',
  },
  'npm install && npm run demo    # the main job against the embedded emulator: publish the fixture release, show the result':
    {
      skip: 'npm install needs the npm registry; .ci/run runs it and the demo on a clean clone (the figures region)',
    },
  'npm install && npm test        # the test suite (builds first)': {
    skip: 'npm install needs the npm registry, and npm test is the suite this file belongs to; .ci/run runs both',
  },
  'provider publish ./dist --organization my-org --key signing-key.asc': { registry: 0 },
  'provider publish ./dist --organization my-org --dry-run --json     # the plan as one JSON document, nothing written':
    { registry: 0 },
  'provider verify fixtures/release --key fixtures/keys/signer.pub.asc': { local: 0 },
  'provider verify fixtures/release --key fixtures/keys/other.pub.asc': { local: 3 },
  'provider lock ./dist --key signing-key.asc --organization my-org': { local: 0 },
  'provider lock --registry --version 1.2.3 --organization my-org --name example   # from what the registry serves':
    { registry: 0 },
  // The lock file the two lines above left holds app.terraform.io/my-org/example (the local release's block) beside
  // the emulator's: the emulator is not app.terraform.io, so that block is a provider from elsewhere (a finding).
  'provider lock check . --organization my-org --format sarif --output lock.sarif  # CI: hold the lock file to the registry':
    { registry: 3 },
  // The emulator serves only 1.2.3, which the lock file holds: nothing newer to move to, exit 0.
  'provider lock upgrade . --min-age 7d --organization my-org   # to the newest version a week old (--recursive: all)':
    { registry: 0 },
  // The emulator serves 1.2.3 of example: verified, then its record written to a new policy.yaml.
  'provider approve my-org/example 1.2.3 --policy policy.yaml --reason "reviewed"   # verified, then recorded':
    { registry: 0 },
  "provider mirror hashicorp/random --versions '~> 3.6' --platforms linux_amd64,darwin_arm64 --organization my-org":
    { skip: 'reads registry.terraform.io; test/mirror/ runs the same flow with an emulator as the origin' },
  "provider mirror hashicorp/random --versions '~> 3.6' --to-dir ./mirror     # air gap, step 1: verified folders, no token":
    {
      skip: 'reads registry.terraform.io; test/mirror/ runs --to-dir against an emulator and a hostile origin',
    },
  'provider publish ./mirror/registry.terraform.io/hashicorp/random/3.6.3 --organization my-org      # step 2, inside: no --key needed':
    {
      skip: 'publishes the folder the line before writes; test/mirror/ publishes a --to-dir folder with no --key',
    },
  'provider versions list --organization my-org --name example': { registry: 0 },
  'provider platforms show 1.2.3 linux_amd64 --organization my-org --name example': { registry: 0 },
  'provider check 1.2.3 --organization my-org --name example --download': { registry: 0 },
  'provider gpg-keys list --organization my-org': { registry: 0 },
  'provider gpg-keys add signing-key.asc --organization my-org': { registry: 0 },
  'provider delete 1.2.3 --organization my-org --name example --dry-run': { registry: 0 },
  'provider delete 1.2.3 --organization my-org --name example --platform linux_arm64 --yes': { registry: 0 },
  "export RUNTASK_HMAC_KEY='the HMAC key set on the run task'": { local: 0 },
  'provider runtask serve --port 8080 --exec ./check-plan.sh --platform-host app.terraform.io': {
    serves: true,
    env: { RUNTASK_HMAC_KEY: 'the HMAC key set on the run task' },
  },
  [[
    'export RUNTASK_HMAC_KEY=s3cret',
    'provider runtask serve --port 8090 --platform-host http://127.0.0.1:9000 --exec ./check-plan.sh &',
    'provider runtask send http://127.0.0.1:8090/ --port 9000 --stage post_plan --expect passed',
    'kill %1',
  ].join('\n')]: { script: 0 },
  'provider emulate --port 8080 --data-dir .emulator': { serves: true },
  'source <(provider completion bash)                                   # in ~/.bashrc': { local: 0 },
  'provider completion zsh > "${fpath[1]}/_provider"                    # zsh (compinit on), then a new shell':
    {
      skip: "zsh's own line: ${fpath[1]} is zsh's function folder (bash has none); test/cli/completion tests the script",
    },
  'provider completion fish > ~/.config/fish/completions/provider.fish  # fish': { local: 0 },
  [[
    'export TF_TOKEN_app_terraform_io="$TFE_TOKEN"          # from the CI system\'s secrets',
    'npx --yes provider-registry-cli@1 publish ./dist --organization my-org --json > provider-publish.json',
  ].join('\n')]: { skip: 'npx fetches the package from the npm registry, and the token is a CI secret' },
  [[
    'provider emulate --port 8080 --data-dir .emulator --request-log requests.jsonl --json > emulator.json &',
    "until [ -s emulator.json ]; do sleep 0.2; done       # the emulator's one line: its URL and tokens",
    'export TFE_HOSTNAME=http://127.0.0.1:8080 TFE_ORGANIZATION=example-org',
    'export TFE_TOKEN="$(node -p \'require("./emulator.json").ownerToken\')"',
    'provider publish ./dist --key signing-key.asc',
    'kill %1',
  ].join('\n')]: { script: 0 },
  'npm test                 # build + all tests (vitest)': {
    skip: 'the whole suite, this file included; .ci/run runs it',
  },
  'npm run test:fast        # the in-process tests, no build, no PostgreSQL, Chromium or install suites: the edit-test loop':
    { skip: 'a part of the suite this file belongs to' },
  'npm run lint             # eslint + dependency-cruiser': {
    skip: 'the linter over the repository; .ci/run runs it',
  },
  'npm run typecheck        # tsc --noEmit': { skip: 'the type check of the repository; .ci/run runs it' },
  'bash .ci/run             # what CI runs, on a clean clone': {
    skip: 'clones the repository and installs from the npm registry',
  },
};

/**
 * The README's command lines: each `$ ` line of a console block; each line of a shell block, or the whole block
 * when its lines depend on each other (it exports a variable or starts something in the background).
 */
function commandLines(markdown: string): string[] {
  const lines: string[] = [];
  for (const block of codeBlocks(markdown)) {
    if (block.lang === 'console') {
      for (const line of block.text.split('\n')) if (line.startsWith('$ ')) lines.push(line.slice(2));
    } else if (['sh', 'bash', 'shell'].includes(block.lang)) {
      const commands = block.text
        .replace(/\\\n/g, ' ')
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.startsWith('#'));
      if (commands.some((line) => /^export |&\s*(#.*)?$/.test(line))) lines.push(commands.join('\n'));
      else lines.push(...commands);
    }
  }
  return lines;
}

/** The project folder a user would run the README's lines in. */
function project(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempRoot('readme-project');
  cpSync(join(root, 'fixtures', 'release'), join(dir, 'dist'), { recursive: true });
  cpSync(join(root, 'fixtures', 'keys', 'signer.pub.asc'), join(dir, 'signing-key.asc'));
  symlinkSync(join(root, 'fixtures'), join(dir, 'fixtures'));
  writeFileSync(join(dir, 'check-plan.sh'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, 'check-plan.sh'), 0o755);
  mkdirSync(join(dir, 'home', '.config', 'fish', 'completions'), { recursive: true });
  mkdirSync(join(dir, 'bin'));
  const bin = join(root, 'bin', 'provider.cjs');
  writeFileSync(join(dir, 'bin', 'provider'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`);
  chmodSync(join(dir, 'bin', 'provider'), 0o755);
  const env = {
    PATH: [join(dir, 'bin'), dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: join(dir, 'home'),
    NO_COLOR: '1',
  };
  return { dir, env };
}

/** Ends a process group that a line started, if anything of it is still running. */
function endGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Starts a server line, waits for it to say it listens, stops it with SIGTERM: its exit code (-1: never listened). */
async function serve(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<number | null> {
  const child = spawn('bash', ['-c', line], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let listened = false;
  const listening = new Promise<void>((resolve) => {
    for (const stream of [child.stdout, child.stderr])
      createInterface({ input: stream }).on('line', (text) => {
        if (text.includes('listening on')) {
          listened = true;
          resolve();
        }
      });
  });
  await Promise.race([listening, exited]);
  endGroup(child);
  const [code] = await exited;
  return listened ? code : -1; // a server that never listened fails whatever its exit code
}

describe("the README's command lines run as written", () => {
  const lines = commandLines(readme);

  it('every command line of the README is listed here, and every entry here is a line of the README', () => {
    expect(Object.keys(expected).sort()).toEqual([...lines].sort());
    expect(lines).toEqual(Object.keys(expected)); // in README order, the order they run in
    for (const [line, what] of Object.entries(expected))
      if ('skip' in what) expect(what.skip.length, line).toBeGreaterThan(20);
  });

  it('the lines on local folders and the emulator end with their documented exit codes', async () => {
    const { dir, env } = project();
    const data = tempDir('readme-registry');
    const emulator = spawn(
      process.execPath,
      [
        join(root, 'bin', 'provider.cjs'),
        'emulate',
        '--port',
        '0',
        '--json',
        '--organization',
        'my-org',
        '--data-dir',
        data,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const outcomes: { line: string; exit: number | null; output?: string }[] = [];
    try {
      const [first] = (await once(createInterface({ input: emulator.stdout }), 'line')) as [string];
      const { url, ownerToken } = JSON.parse(first) as Record<string, string>;
      for (const [line, what] of Object.entries(expected)) {
        if ('skip' in what) continue;
        if ('serves' in what) {
          outcomes.push({ line, exit: await serve(line, dir, { ...env, ...what.env }) });
          continue;
        }
        const lineEnv = 'registry' in what ? { ...env, TFE_HOSTNAME: url, TFE_TOKEN: ownerToken } : env;
        const args = 'script' in what ? ['-e', '-c', line] : ['-c', line];
        const child = spawn('bash', args, {
          cwd: dir,
          env: lineEnv,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const [code] = (await once(child, 'exit')) as [number | null];
        endGroup(child, 'SIGKILL'); // anything a script left in the background
        outcomes.push({ line, exit: code, output: output.slice(-1500) });
      }
    } finally {
      emulator.kill('SIGTERM');
      await once(emulator, 'exit');
    }
    const wanted = Object.entries(expected).flatMap(([line, what]) =>
      'skip' in what
        ? []
        : [
            {
              line,
              exit:
                'serves' in what
                  ? 0
                  : 'local' in what
                    ? what.local
                    : 'registry' in what
                      ? what.registry
                      : what.script,
            },
          ],
    );
    const failed = outcomes.filter((o, i) => o.exit !== wanted[i]!.exit);
    expect(failed.map((o) => `${o.line}\n→ exit ${o.exit}\n${o.output ?? ''}`)).toEqual([]);
    expect(outcomes.map(({ line, exit }) => ({ line, exit }))).toEqual(wanted);
    // What the lines left behind is what the README says they write.
    expect(readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8')).toMatch(
      /provider "app\.terraform\.io\/my-org\/example"/,
    );
    expect(
      readFileSync(join(dir, 'home', '.config', 'fish', 'completions', 'provider.fish'), 'utf8'),
    ).toMatch(/complete/);
    expect(readFileSync(join(dir, 'requests.jsonl'), 'utf8')).toMatch(/"method":"PUT"/);
  }, 300_000);
});
