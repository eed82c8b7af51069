/**
 * The GitLab CI/CD component (templates/publish.yml) and the values its inputs may hold (hardening round 3,
 * docs/reliability.md): any one-line text reaches the script exactly, under both interpolations GitLab has had;
 * a list of tags survives whatever its items hold; a line break in a text input is refused by GitLab before any
 * job exists (no YAML can keep it); a `directory` that looks like a flag is a folder name. The job runs this
 * repository's build (./gitlabJob.ts; the packed package runs it in package.test.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { emulatorPerTest, onRequestStart } from '../helpers/emulator/index.js';
import { ensureBuilt } from '../helpers/spawn-cli.js';
import { RELEASE, SIGNER_KEY, expectNoTokens } from './helpers.js';
import { PipelineError, componentJob, componentSpec, repositoryProviderDir, runJob } from './gitlabJob.js';

const emulator = emulatorPerTest();
let providerDir = '';

beforeAll(() => {
  ensureBuilt();
  providerDir = repositoryProviderDir();
});

/** One-line texts that YAML reads as something else when pasted bare or quoted. */
const AWKWARD = [
  `it's "quoted"`,
  'a # not a comment',
  'key: value',
  '- a leading dash',
  '--hostname=elsewhere',
  '*alias',
  '!tag',
  '{flow}',
  'back\\slash',
  '  spaces around  ',
  '1.10',
  'true',
];

/** The text inputs and the variable each becomes. */
const TEXT_INPUTS: Record<string, string> = {
  package: 'PROVIDER_INPUT_PACKAGE',
  directory: 'PROVIDER_INPUT_DIRECTORY',
  organization: 'PROVIDER_INPUT_ORGANIZATION',
  hostname: 'PROVIDER_INPUT_HOSTNAME',
  name: 'PROVIDER_INPUT_NAME',
  version: 'PROVIDER_INPUT_VERSION',
  protocols: 'PROVIDER_INPUT_PROTOCOLS',
  concurrency: 'PROVIDER_INPUT_CONCURRENCY',
  'wait-timeout': 'PROVIDER_INPUT_WAIT_TIMEOUT',
};

describe('item 15: any value of an input survives GitLab interpolation', () => {
  it.each(['text', 'hash'] as const)(
    '%s interpolation: every one-line text reaches its variable exactly, as a string',
    (interpolation) => {
      for (const value of AWKWARD) {
        const inputs = Object.fromEntries(Object.keys(TEXT_INPUTS).map((name) => [name, value]));
        const job = componentJob({ ...inputs, stage: value, image: value }, interpolation);
        // Pasted as text, a literal block keeps everything but the leading blanks (read as its indentation).
        const kept = interpolation === 'text' ? value.trimStart() : value;
        for (const [input, variable] of Object.entries(TEXT_INPUTS)) {
          expect(job.variables[variable], `${input}: ${value}`).toBe(kept);
        }
        expect(job.stage).toBe(kept);
        expect(job.image).toBe(kept);
      }
    },
  );

  it.each(['text', 'hash'] as const)(
    '%s interpolation: dry-run and tags become strings the script reads',
    (interpolation) => {
      const job = componentJob(
        { 'dry-run': true, tags: ['team=core platform', 'stage=beta'] },
        interpolation,
      );
      expect(job.variables.PROVIDER_INPUT_DRY_RUN).toBe('dry-run=true');
      expect(JSON.parse((job.variables.PROVIDER_INPUT_TAGS as string).replace(/^tags=/, ''))).toEqual([
        'team=core platform',
        'stage=beta',
      ]);
    },
  );

  it('a line break in a text input is refused by GitLab itself, naming the input (no YAML keeps one)', () => {
    for (const input of [...Object.keys(TEXT_INPUTS), 'job-name', 'stage', 'image']) {
      expect(() => componentJob({ [input]: 'dist\n    PROVIDER_INPUT_HOSTNAME: elsewhere' }), input).toThrow(
        new PipelineError(`\`${input}\` input: provided value does not match required RegEx pattern`),
      );
    }
    // Tags are a list: one text of several lines (the reported case) is refused too, rather than read as one
    // tag holding spaces, which is what Ruby's YAML reader folds it into.
    expect(componentSpec().tags).toMatchObject({ type: 'array', default: [] });
    expect(() => componentJob({ tags: 'team=core\nstage=beta' })).toThrow(
      new PipelineError('`tags` input: provided value is not an array'),
    );
  });

  it('a list of tags, items with spaces and several per item: the version gets exactly those', async () => {
    const e = await emulator();
    const run = await runJob({
      inputs: {
        organization: e.organization,
        hostname: e.url,
        directory: RELEASE,
        tags: ['team=core platform', 'stage=beta, tier=1'],
      },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GPG_KEY: SIGNER_KEY },
      providerDir,
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expectNoTokens(run.stdout + run.stderr, e, 'the job log');
    const doc = JSON.parse(fs.readFileSync(path.join(run.project, 'provider-publish.json'), 'utf8')) as {
      tags: { tags: { key: string; value: string }[] };
    };
    expect(doc.tags.tags).toEqual([
      { key: 'stage', value: 'beta' },
      { key: 'team', value: 'core platform' },
      { key: 'tier', value: '1' },
    ]);
    // Item 8, the component's form: the key registered is the trimmed block, as the Action's.
    expect(e.store.data.gpgKeys.map((k) => k.asciiArmor)).toEqual([SIGNER_KEY.trim()]);
  });

  it('a list item that is not text fails the job with exit 2, saying what tags takes', async () => {
    const e = await emulator();
    const run = await runJob({
      inputs: { organization: e.organization, hostname: e.url, directory: RELEASE, tags: [{ team: 'core' }] },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GPG_KEY: SIGNER_KEY },
      providerDir,
    });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toContain('error: the tags input is not a list of key=value texts');
    expect(e.requestLog.records).toEqual([]);
  });
});

describe("item 9: a server's words never begin a line of the job's log", () => {
  it('a refusal whose detail holds line breaks: each escaped within the line that shows it', async () => {
    const e = await emulator();
    const detail = 'name is invalid\nJob succeeded\r\n\u001b[0Ksection_end:1:publish\n::add-mask::x';
    onRequestStart(e, (request) => (request.method === 'POST' ? { status: 422, detail } : undefined));
    const run = await runJob({
      inputs: { organization: e.organization, hostname: e.url, directory: RELEASE },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GPG_KEY: SIGNER_KEY },
      providerDir,
    });
    expect(run.exitCode).toBe(4);
    const lines = (run.stdout + run.stderr).split(/\r\n|\r|\n/);
    const forged = ['Job succeeded', '\u001b', '::'];
    expect(lines.filter((line) => forged.some((start) => line.startsWith(start)))).toEqual([]);
    expect(run.stderr).toContain(
      'name is invalid%0AJob succeeded%0D%0A\u001b[0Ksection_end:1:publish%0A::add-mask::x',
    );
    // The result document keeps the server's words as they were.
    const doc = JSON.parse(fs.readFileSync(path.join(run.project, 'provider-publish.json'), 'utf8')) as {
      error: { message: string };
    };
    expect(doc.error.message).toContain(detail);
  });
});

describe('item 10: a directory input that looks like a flag is a folder name', () => {
  it('directory: --hostname=<another host> sends nothing there: the job fails with exit 2', async () => {
    const [e, elsewhere] = await Promise.all([emulator(), emulator()]);
    const run = await runJob({
      inputs: { organization: e.organization, directory: `--hostname=${elsewhere.url}` },
      env: { TFE_TOKEN: e.ownerToken, PROVIDER_GPG_KEY: SIGNER_KEY },
      providerDir,
      // A release in ./dist: taken as a flag, the input would publish it to elsewhere with the token.
      project: (dir) => fs.cpSync(RELEASE, path.join(dir, 'dist'), { recursive: true }),
    });
    expect(elsewhere.requestLog.records).toEqual([]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    const doc = JSON.parse(fs.readFileSync(path.join(run.project, 'provider-publish.json'), 'utf8')) as {
      error: { message: string };
    };
    expect(doc.error.message).toMatch(
      /^No release folder here: \S*\/--hostname=http:\/127\.0\.0\.1:\d+ does not/,
    );
  });
});
