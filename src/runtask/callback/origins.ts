/**
 * Where the run task access token may go: the origins named by `--platform-host` (default app.terraform.io).
 * A URL merely named in a payload (callback, plan JSON) gets the token only when its origin is on this list,
 * so a forged or misdirected payload cannot make the integrator leak it (run-tasks.md §5, hardening pattern).
 */
import { parseHostname } from '../../config/hostname.js';
import { UsageError } from '../../errors.js';

/** The default platform host. */
export const DEFAULT_PLATFORM_HOST = 'app.terraform.io';

/** The allowed origins, e.g. `https://app.terraform.io` and `http://127.0.0.1:9000`. */
export class PlatformOrigins {
  readonly origins: ReadonlySet<string>;

  constructor(origins: Iterable<string>) {
    this.origins = new Set(origins);
  }

  /** True when the token may be sent to this URL (an absolute http(s) URL on an allowed origin). */
  allows(url: string | undefined): boolean {
    if (url === undefined) return false;
    try {
      const parsed = new URL(url);
      return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && this.origins.has(parsed.origin);
    } catch {
      return false;
    }
  }

  /** The list for messages. */
  describe(): string {
    return [...this.origins].join(', ');
  }
}

/** Parses `--platform-host` values: a host (https), host:port, or a URL whose origin is used. */
export function parsePlatformHosts(values: readonly string[] | undefined): PlatformOrigins {
  const list = values === undefined || values.length === 0 ? [DEFAULT_PLATFORM_HOST] : values;
  return new PlatformOrigins(list.map((value) => parseHostname(value, '--platform-host').baseUrl));
}

/** A URL reduced to what may be logged: origin and path, no query (it may hold a `url_code` secret). */
export function loggableUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/** The usage error for a URL outside the allowed origins. */
export function originNotAllowed(what: string, url: string, allowed: PlatformOrigins): UsageError {
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch {
    // not a URL at all: name it as given (it holds no token)
  }
  return new UsageError(
    `the ${what} ${loggableUrl(url)} is not on an allowed platform host (${allowed.describe()}); the access token is not sent there`,
    {
      hint: `If ${origin} really is your HCP Terraform / Terraform Enterprise, add --platform-host ${origin}.`,
    },
  );
}
