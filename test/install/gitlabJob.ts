/**
 * The GitLab CI/CD component (templates/publish.yml) as GitLab makes a job of it, and that job run as a runner
 * runs it. GitLab first checks the `include:inputs` against `spec:inputs` (declared, of their type, matching
 * their `regex`; docs.gitlab.com/ci/yaml, `spec:inputs`), then interpolates `$[[ inputs.<name> ]]`, in one of
 * two ways it has had (gitlab-org/gitlab lib/gitlab/ci/config/interpolation/): `text` (TextTemplate, behind
 * the `ci_text_interpolation` flag, GitLab.com today) pastes a string's text where the block stands and any
 * other value as JSON, then reads the YAML; `hash` (Template, before it) reads the YAML first, then replaces a
 * string that is exactly one block with the typed value, and a block inside a longer string with the value's
 * text (an array's as Ruby writes it: `["a", "b"]`). The YAML is read strictly (the `yaml` package: a line
 * less indented than its scalar is an error, where Ruby's reader may fold it into a space).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, parseDocument } from 'yaml';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempRoot } from '../helpers/tmp.js';
import { FAST, runProcess, userPath } from './helpers.js';

/** The components, by file name under templates/. */
export type Template = 'publish.yml' | 'lock-upgrade.yml';
const BLOCK = /\$\[\[\s*inputs\.([a-z-]+)\s*\]\]/g;

/** One input of `spec:inputs`. */
export interface InputSpec {
  default?: unknown;
  type?: 'string' | 'boolean' | 'number' | 'array';
  regex?: string;
  description?: string;
}

/** The component's job as GitLab builds it from the inputs. */
export interface ComponentJob {
  name: string;
  stage: unknown;
  image: unknown;
  variables: Record<string, unknown>;
  script: string[];
  artifacts: { when: string; paths: string[]; reports: { dotenv: string } };
}

/** What GitLab refuses an include with, before any job exists (a pipeline error, not a failed job). */
export class PipelineError extends Error {}

/** The template's two documents: the `spec` header and the jobs, as text. */
function templateParts(template: Template): { header: string; content: string } {
  const text = fs.readFileSync(path.join(REPO_ROOT, 'templates', template), 'utf8');
  const divider = /^---$/m.exec(text);
  if (divider === null) throw new Error(`templates/${template} has no --- after its spec`);
  return { header: text.slice(0, divider.index), content: text.slice(divider.index + 4) };
}

/** `spec:inputs` of the component. */
export function componentSpec(template: Template = 'publish.yml'): Record<string, InputSpec> {
  return (
    parseDocument(templateParts(template).header).toJS() as { spec: { inputs: Record<string, InputSpec> } }
  ).spec.inputs;
}

/** The inputs' values as GitLab takes them: each declared, of its type, matching its regex; defaults filled in. */
function checkInputs(given: Record<string, unknown>, template: Template): Record<string, unknown> {
  const spec = componentSpec(template);
  for (const name of Object.keys(given)) {
    if (spec[name] === undefined) throw new PipelineError(`unknown input arguments: ${name}`);
  }
  const values: Record<string, unknown> = {};
  for (const [name, input] of Object.entries(spec)) {
    const value = name in given ? given[name] : input.default;
    if (value === undefined)
      throw new PipelineError(`\`${name}\` input: required value has not been provided`);
    const type = input.type ?? 'string';
    const typeOk =
      type === 'array'
        ? Array.isArray(value)
        : type === 'number'
          ? typeof value === 'number'
          : typeof value === type;
    if (!typeOk) {
      throw new PipelineError(
        `\`${name}\` input: provided value is not ${type === 'array' ? 'an' : 'a'} ${type}`,
      );
    }
    // RE2 and JavaScript agree on the patterns used here: no flags, ^ and $ at the ends of the whole text.
    if (input.regex !== undefined && !new RegExp(input.regex).test(value as string)) {
      throw new PipelineError(`\`${name}\` input: provided value does not match required RegEx pattern`);
    }
    values[name] = value;
  }
  return values;
}

/** An array's text as Ruby's `to_s` writes it (the `hash` interpolation of a block inside a longer string). */
function rubyText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => JSON.stringify(item)).join(', ')}]`;
  return String(value);
}

/** Replaces the blocks in every string of a parsed document (`hash` interpolation). */
function replaceBlocks(node: unknown, values: Record<string, unknown>): unknown {
  if (typeof node === 'string') {
    const whole = /^\$\[\[\s*inputs\.([a-z-]+)\s*\]\]$/.exec(node);
    if (whole !== null) return values[whole[1]!];
    return node.replace(BLOCK, (_, name: string) => rubyText(values[name]));
  }
  if (Array.isArray(node)) return node.map((item) => replaceBlocks(item, values));
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [
        replaceBlocks(key, values) as string,
        replaceBlocks(value, values),
      ]),
    );
  }
  return node;
}

/** The job GitLab makes of the component with these inputs (PipelineError when it refuses them or the YAML). */
export function componentJob(
  given: Record<string, unknown>,
  interpolation: 'text' | 'hash' = 'text',
  template: Template = 'publish.yml',
): ComponentJob {
  const values = checkInputs(given, template);
  const { content } = templateParts(template);
  let jobs: Record<string, unknown>;
  if (interpolation === 'text') {
    const text = content.replace(BLOCK, (_, name: string) => {
      const value = values[name];
      return typeof value === 'string' ? value : JSON.stringify(value);
    });
    const [document] = parseAllDocuments(text);
    if (document === undefined || !('errors' in document) || document.errors.length > 0) {
      const reason = document !== undefined && 'errors' in document ? document.errors[0]?.message : '';
      throw new PipelineError(`the job's YAML is invalid: ${reason}`);
    }
    jobs = document.toJS() as Record<string, unknown>;
  } else {
    jobs = replaceBlocks(parseDocument(content).toJS(), values) as Record<string, unknown>;
  }
  const [name, job] = Object.entries(jobs)[0]!;
  const built = { name, ...(job as Omit<ComponentJob, 'name'>) };
  for (const [variable, value] of Object.entries(built.variables)) {
    // GitLab: "variables config should be a hash of key value pairs" (a string each here).
    if (typeof value !== 'string') throw new PipelineError(`variable ${variable} is not a string`);
  }
  return built;
}

/** A folder holding a `provider` command that runs this repository's build (`npm run build`). */
export function repositoryProviderDir(): string {
  const dir = tempRoot('provider-bin');
  const script = path.join(dir, 'provider');
  const bin = path.join(REPO_ROOT, 'bin', 'provider.cjs');
  fs.writeFileSync(script, `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`, { mode: 0o755 });
  return dir;
}

/**
 * Runs the job's script as a GitLab runner does: its variables in the environment, the script's lines in one
 * shell stopping at the first failure, in a fresh project folder (`project` prepares it), `provider` from
 * `providerDir`.
 */
export async function runJob(options: {
  inputs: Record<string, unknown>;
  env: Record<string, string>;
  providerDir: string;
  project?: (dir: string) => void;
  template?: Template;
}) {
  const job = componentJob(options.inputs, 'text', options.template);
  const project = tempRoot('gitlab-project');
  options.project?.(project);
  const script = ['set -e', ...job.script].join('\n');
  const result = await runProcess('sh', ['-c', script], {
    cwd: project,
    env: {
      PATH: `${options.providerDir}${path.delimiter}${userPath()}`,
      CI: 'true',
      GITLAB_CI: 'true',
      CI_PROJECT_DIR: project,
      ...FAST,
      ...(job.variables as Record<string, string>),
      ...options.env,
    },
  });
  return { ...result, project, job };
}
