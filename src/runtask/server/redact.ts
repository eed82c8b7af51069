/**
 * A database URL as it may be shown: its password replaced by `***`. Every message that names the database
 * (the start-up line, the log, errors) goes through this; the password itself is also handed to the output as a
 * secret, which masks it wherever it would still appear.
 */
/**
 * The URL with its password replaced by `***`. Text that is no URL is not shown at all (it may be a libpq
 * `key=value` string, password included).
 */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.href;
  } catch {
    return '(not a URL: not shown)';
  }
}

/** The password of a database URL, raw and as written in it (percent-encoded), or none. */
export function passwordsOf(url: string): string[] {
  try {
    const encoded = new URL(url).password;
    if (encoded === '') return [];
    let decoded = encoded;
    try {
      decoded = decodeURIComponent(encoded);
    } catch {
      // A stray % is kept as written.
    }
    return [...new Set([encoded, decoded])];
  } catch {
    return [];
  }
}
