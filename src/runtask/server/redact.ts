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
 * How long a secret must be for a value that merely contains it to count as holding it (a URL with the
 * database password in it, `key=<the HMAC key>`). A shorter one is matched as the whole value only: a one-letter
 * key is a letter of most values, and removing every variable that has it would take away what handlers need
 * (`PATH`, a registry token).
 */
export const CONTAINED_SECRET_MIN = 8;

/** Whether an environment value holds one of `secrets`: equal to one, or containing one long enough to tell. */
export function holdsSecret(value: string, secrets: readonly string[]): boolean {
  return secrets.some(
    (secret) =>
      secret !== '' &&
      (value === secret || (secret.length >= CONTAINED_SECRET_MIN && value.includes(secret))),
  );
}

/**
 * The environment handlers inherit, without the database's credentials when the integrator uses one: the PG*
 * variables node-postgres reads, and any variable whose value holds the URL's password (`holdsSecret`).
 */
export function withoutDatabaseEnv(
  env: Record<string, string | undefined>,
  databaseUrl: string | undefined,
): Record<string, string | undefined> {
  if (databaseUrl === undefined) return env;
  const secrets = passwordsOf(databaseUrl);
  return Object.fromEntries(
    Object.entries(env).filter(
      ([name, value]) => !PG_VARIABLE.test(name) && !(value !== undefined && holdsSecret(value, secrets)),
    ),
  );
}
