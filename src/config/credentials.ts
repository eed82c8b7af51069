/**
 * Finding the API token. The sources and their order follow Terraform's own, so a machine already set up
 * for `terraform` works unchanged. A token's value never appears in any message this module produces.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../errors.js';
import type { ApiHost } from './hostname.js';

/** Where the token came from; reported by `--verbose`, never the token itself. */
export type TokenSource = 'flag' | 'TF_TOKEN' | 'TFE_TOKEN' | 'credentials.tfrc.json';

/** What `resolveToken` needs; everything from the process is passed in so tests can fake it. */
export interface ResolveTokenInput {
  apiHost: ApiHost;
  flagToken?: string | undefined;
  env: Record<string, string | undefined>;
  homeDir: string;
  platform?: NodeJS.Platform;
  /** Returns the file's text, or undefined when it does not exist. */
  readFile?: (path: string) => string | undefined;
}

/** A token and where it was found. */
export interface ResolvedToken {
  token: string;
  source: TokenSource;
  warning?: string;
}

const TOKEN_PREFIX = 'TF_TOKEN_';

/** The `TF_TOKEN_…` variable name for a hostname, encoded as Terraform decodes it (`-` → `__`, `.` → `_`). */
export function encodeTokenVariable(hostname: string): string {
  return TOKEN_PREFIX + hostname.replaceAll('-', '__').replaceAll('.', '_');
}

/**
 * Set to `true` by the GitHub Action (src/cli/action.ts) in the environment of the command it runs: there the
 * token comes from the step's `token` input, and `terraform login` is no way to give one.
 */
export const ACTION_VARIABLE = 'PROVIDER_GITHUB_ACTION';

/** How to give the command a (valid) token for `apiHost`, in one sentence: the hints of a missing or refused one. */
export function tokenAdvice(apiHost: ApiHost, env: Record<string, string | undefined>): string {
  const variable = encodeTokenVariable(apiHost.hostname);
  if (env[ACTION_VARIABLE] === 'true') {
    return `Give the step's \`token\` input a valid API token for ${apiHost.host} from a secret (\`token: \${{ secrets.TFE_TOKEN }}\`), or set TFE_TOKEN or ${variable} in the step's \`env\`.`;
  }
  return `Run \`terraform login ${apiHost.host}\`, or set ${variable} (or TFE_TOKEN) to a valid token in the environment.`;
}

/** Path of the file `terraform login` writes: `%APPDATA%` on Windows, `~/.terraform.d` elsewhere. */
export function credentialsFilePath(input: {
  env: Record<string, string | undefined>;
  homeDir: string;
  platform?: NodeJS.Platform;
}): string {
  if ((input.platform ?? process.platform) === 'win32') {
    // Terraform asks Windows for the roaming AppData folder; APPDATA holds the same, the fallback its default.
    const appData = nonEmpty(input.env.APPDATA) ?? path.win32.join(input.homeDir, 'AppData', 'Roaming');
    return path.win32.join(appData, 'terraform.d', 'credentials.tfrc.json');
  }
  return path.posix.join(input.homeDir, '.terraform.d', 'credentials.tfrc.json');
}

/** Finds the API token: `--token` > `TF_TOKEN_<host>` > `TFE_TOKEN` > credentials.tfrc.json. */
export function resolveToken(input: ResolveTokenInput): ResolvedToken {
  const { apiHost, env } = input;
  const variable = encodeTokenVariable(apiHost.hostname);

  if (input.flagToken !== undefined) {
    if (input.flagToken.trim() === '') {
      throw new UsageError('--token was given an empty value', {
        hint: `Leave --token out and set ${variable} or TFE_TOKEN in the environment instead.`,
      });
    }
    const warning =
      `--token is visible to other users in the process list and may be kept in your shell history; ` +
      `set ${variable} in the environment or run \`terraform login ${apiHost.host}\` instead.`;
    return { token: input.flagToken, source: 'flag', warning };
  }

  const fromHostVariable = tokenFromHostVariables(env, apiHost);
  if (fromHostVariable !== undefined) return { token: fromHostVariable, source: 'TF_TOKEN' };

  const tfeToken = nonEmpty(env.TFE_TOKEN);
  if (tfeToken !== undefined) return { token: tfeToken, source: 'TFE_TOKEN' };

  const file = credentialsFilePath(input);
  const fromFile = tokenFromCredentialsFile(file, apiHost, input.readFile ?? readIfExists);
  if (fromFile !== undefined) return { token: fromFile, source: 'credentials.tfrc.json' };

  throw new UsageError(`No API token was found for ${apiHost.host}.`, {
    hint: tokenAdvice(apiHost, env),
    details: { host: apiHost.host, variable, credentialsFile: file },
  });
}

/** Terraform's decoding (collectCredentialsFromEnv): `__` → `-`, then `_` → `.`; the last match wins. */
function tokenFromHostVariables(
  env: Record<string, string | undefined>,
  apiHost: ApiHost,
): string | undefined {
  let found: string | undefined;
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(TOKEN_PREFIX) || nonEmpty(value) === undefined) continue;
    const raw = name.slice(TOKEN_PREFIX.length).replaceAll('__', '-').replaceAll('_', '.');
    // A variable name cannot hold a port, so it names the hostname; one given with a port is honoured too.
    const key = comparableHost(raw);
    if (key !== undefined && (key === apiHost.hostname || key === apiHost.host)) found = value;
  }
  return found;
}

/** Reads the `terraform login` file; the entry for `host` (with port) beats the one for the bare hostname. */
function tokenFromCredentialsFile(
  file: string,
  apiHost: ApiHost,
  readFile: (path: string) => string | undefined,
): string | undefined {
  let text: string | undefined;
  try {
    text = readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new UsageError(`Cannot read ${file} (${code})`, {
      hint: 'Check the file permissions, or set TF_TOKEN_<host> or TFE_TOKEN instead.',
    });
  }
  if (text === undefined || text.trim() === '') return undefined;

  const malformed = (what: string): UsageError =>
    new UsageError(`${file} is malformed: ${what}`, {
      hint: `Fix or delete the file and run \`terraform login ${apiHost.host}\` again.`,
    });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    // JSON.parse may quote the text it choked on, which could be a token: report only the position.
    throw malformed(`it is not valid JSON${jsonErrorPosition(text, error)}`);
  }
  if (!isRecord(data)) throw malformed('the top level must be a JSON object');
  const credentials = data.credentials;
  if (credentials === undefined) return undefined;
  if (!isRecord(credentials)) throw malformed('"credentials" must be a JSON object keyed by hostname');

  let byHost: unknown;
  let byHostname: unknown;
  for (const [key, entry] of Object.entries(credentials)) {
    const comparable = comparableHost(key);
    if (comparable === apiHost.host) byHost = entry;
    else if (comparable === apiHost.hostname) byHostname = entry;
  }
  const entry = byHost ?? byHostname;
  if (entry === undefined) return undefined;
  if (!isRecord(entry) || (entry.token !== undefined && typeof entry.token !== 'string')) {
    throw malformed(`the entry for ${apiHost.host} must be an object with a string "token"`);
  }
  return nonEmpty(entry.token);
}

/** Normalizes a host as Terraform compares them: lowercase, punycode, default port dropped. */
function comparableHost(raw: string): string | undefined {
  if (raw === '' || /[\s/?#@\\]/.test(raw)) return undefined;
  try {
    return new URL(`https://${raw}`).host;
  } catch {
    return undefined;
  }
}

function jsonErrorPosition(text: string, error: unknown): string {
  const match = /position (\d+)/.exec(error instanceof Error ? error.message : '');
  if (match === null) return '';
  const before = text.slice(0, Number(match[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return ` (line ${line}, column ${column})`;
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
