/**
 * A database URL as it may be shown: its password replaced by `***`. Every message that names the database
 * (the start-up line, the log, errors) goes through this; the password itself is also handed to the output as a
 * secret, which masks it wherever it would still appear.
 */
/** Query parameters that node-postgres takes as a password (`?password=…` works as well as `user:…@`). */
const SECRET_PARAMS = ['password', 'sslpassword'];

/**
 * The URL with its password replaced by `***`, in the user part and in the query. Text that is no URL is not
 * shown at all (it may be a libpq `key=value` string, password included).
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (passwordsOf(url).length === 0) return url;
    if (parsed.password !== '') parsed.password = '***';
    let text = parsed.href;
    // Replaced in the text as written (URLSearchParams would re-encode the rest of the query).
    for (const name of SECRET_PARAMS) {
      text = text.replace(new RegExp(`([?&]${name}=)[^&#]*`, 'gi'), '$1***');
    }
    return text;
  } catch {
    return '(not a URL: not shown)';
  }
}

/** A secret as written in the URL (percent-encoded) and decoded. */
function bothForms(encoded: string): string[] {
  let decoded = encoded;
  try {
    decoded = decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    // A stray % is kept as written.
  }
  return [encoded, decoded];
}

/** The passwords of a database URL (user part and query), raw and as written in it (percent-encoded), or none. */
export function passwordsOf(url: string): string[] {
  try {
    const parsed = new URL(url);
    const found: string[] = parsed.password === '' ? [] : bothForms(parsed.password);
    for (const match of parsed.search.matchAll(/[?&]([^=&]*)=([^&#]*)/g)) {
      if (SECRET_PARAMS.includes(match[1]!.toLowerCase()) && match[2] !== '')
        found.push(...bothForms(match[2]!));
    }
    return [...new Set(found)];
  } catch {
    return [];
  }
}

/** `text` with each of `secrets` (a database URL's passwords: `passwordsOf`) replaced by `***`. */
export function withoutPasswords(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

/** libpq's and node-postgres's connection variables (`PGPASSWORD`, `PGHOST`, …; not `PGP_…`). */
const PG_VARIABLE = /^PG(?!P_)[A-Z_]+$/;

/**
 * How long a secret must be to count wherever it stands in a value, even inside a word (a long random key is never
 * part of an unrelated value by chance). A shorter one counts only as a whole piece of the value (`standsIn`): a
 * one-letter key is a letter of most values, and a common word (a database password `postgres`) part of paths
 * (`/usr/lib/postgresql/16/bin`); removing every variable that has it would take away what handlers need (`PATH`,
 * `HOME`, a registry token).
 */
export const CONTAINED_SECRET_MIN = 16;

/** Whether a character is an ASCII letter or digit: any other character ends a piece of a value. */
function isWordChar(char: string | undefined): boolean {
  return char !== undefined && /^[A-Za-z0-9]$/.test(char);
}

/**
 * Whether `secret` stands in `text` as a whole piece: some occurrence with, on each side, an end of the text or a
 * character that is no ASCII letter or digit (`:`, `/`, `=`, quotes, brackets, `|`, `#`, whitespace, …). A side of
 * the secret that is itself no letter or digit needs no such character.
 */
function standsIn(text: string, secret: string): boolean {
  const open = !isWordChar(secret[0]);
  const close = !isWordChar(secret.at(-1));
  for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
    const end = at + secret.length;
    if ((open || !isWordChar(text[at - 1])) && (close || !isWordChar(text[end]))) return true;
  }
  return false;
}

/** `text` URL-decoded (as written when it is not valid percent-encoding). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Runs of base64 (standard or URL-safe), padded to whole quads: `Basic dXNlcjpodW50ZXIy`, a JSON `auth`. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{8,}={0,2}/g;

/** Whether decoded bytes read as text: valid UTF-8, no control character but tabs and line ends. */
function readsAsText(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code === 0xfffd || (code < 0x20 && !'\t\n\r'.includes(char)) || (code >= 0x7f && code < 0xa0))
      return false;
  }
  return true;
}

/**
 * What the base64 runs of a value say, when they decode to text: credentials written as `Basic <base64 of
 * user:password>` (an `Authorization` header, a registry's `auth`). A random token decodes to bytes that are no
 * text, so it is not read this way.
 */
function base64Texts(value: string): string[] {
  const texts: string[] = [];
  for (const [run] of value.matchAll(BASE64_RUN)) {
    if (run.length % 4 !== 0) continue;
    const text = Buffer.from(run, 'base64').toString('utf8');
    if (readsAsText(text)) texts.push(text);
  }
  return texts;
}

/**
 * The forms of a value a secret is looked for in: as written, URL-decoded, a URL's user and password, and what
 * its base64 runs say.
 */
function formsOf(value: string): string[] {
  const forms = [value, decoded(value)];
  if (URL.canParse(value)) {
    const url = new URL(value);
    for (const part of [url.username, url.password]) if (part !== '') forms.push(decoded(part));
  }
  return [...forms, ...base64Texts(value)];
}

/**
 * Whether an environment value holds one of `secrets`: as a whole piece of it (`standsIn`: the value itself, a
 * URL's password, a `key=value`'s value, a JSON string, a word), in any of its forms (`formsOf`), or anywhere in
 * it when the secret is long enough to tell (`CONTAINED_SECRET_MIN`).
 */
export function holdsSecret(value: string, secrets: readonly string[]): boolean {
  const wanted = secrets.filter((secret) => secret !== '');
  if (wanted.length === 0) return false;
  const forms = formsOf(value);
  return wanted.some((secret) =>
    forms.some(
      (form) => standsIn(form, secret) || (secret.length >= CONTAINED_SECRET_MIN && form.includes(secret)),
    ),
  );
}

/** The variables `withoutDatabaseEnv` removed, by the environment it returned. */
const removedForDatabase = new WeakMap<object, readonly string[]>();

/** The names of the variables `withoutDatabaseEnv` removed to make `env` (none for any other object). */
export function databaseEnvRemoved(env: object): readonly string[] {
  return removedForDatabase.get(env) ?? [];
}

/**
 * The environment handlers inherit, without the database's credentials when the integrator uses one: the PG*
 * variables node-postgres reads, and any variable whose value holds the URL's password (`holdsSecret`). Their
 * names are kept for the log (`databaseEnvRemoved`).
 */
export function withoutDatabaseEnv(
  env: Record<string, string | undefined>,
  databaseUrl: string | undefined,
): Record<string, string | undefined> {
  if (databaseUrl === undefined) return env;
  const secrets = passwordsOf(databaseUrl);
  const kept: Record<string, string | undefined> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (PG_VARIABLE.test(name) || (value !== undefined && holdsSecret(value, secrets))) removed.push(name);
    else kept[name] = value;
  }
  removedForDatabase.set(kept, removed);
  return kept;
}
