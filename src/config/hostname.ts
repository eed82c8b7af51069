/**
 * Where the API lives. Users write a bare host (`app.terraform.io`, `tfe.example.com:8443`) the way
 * `terraform login` takes it, or a URL the way TFE_ADDRESS holds it; both become one ApiHost.
 */
import { UsageError } from '../errors.js';

/** The API server, in the three shapes the rest of the program needs. */
export interface ApiHost {
  /** Origin without a trailing slash, e.g. `https://app.terraform.io` or `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Lowercase `hostname[:port]` (default ports dropped), the key for credentials lookup. */
  host: string;
  /** Lowercase hostname without port; IDNs in punycode form (`xn--caf-dma.fr`). */
  hostname: string;
}

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
// A bare host: a name or bracketed IPv6 address, an optional port and at most a trailing slash.
const BARE_HOST = /^(?:\[[0-9a-f:.]+\]|[^\s/?#@:[\]]+)(?::\d+)?\/?$/i;
const HINT =
  'Give a hostname such as app.terraform.io or tfe.example.com:8443, or a URL such as https://tfe.example.com or http://127.0.0.1:8080.';

/** Turns a bare host (meaning https) or an http(s) URL into an ApiHost; `source` names where it came from. */
export function parseHostname(input: string, source: string): ApiHost {
  const text = input.trim();
  // A password in the URL must not be echoed back into logs.
  const shown = input.replace(/\/\/[^/@]*@/, '//***@');
  const fail = (reason: string): UsageError =>
    new UsageError(`${source}: "${shown}" is not a valid hostname or URL (${reason})`, { hint: HINT });

  if (text === '') throw fail('it is empty');
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (!BARE_HOST.test(text)) throw fail('a bare hostname may only have a port; write a full URL otherwise');
  } else if (scheme !== 'http' && scheme !== 'https') {
    throw fail(`the scheme must be http or https, not ${scheme}`);
  }

  let url: URL;
  try {
    url = new URL(scheme === undefined ? `https://${text}` : text);
  } catch {
    throw fail('it cannot be parsed');
  }
  // Credentials in a URL end up in logs and process lists; tokens have their own channels.
  if (url.username !== '' || url.password !== '') throw fail('it must not contain a user name or password');
  if (url.search !== '' || text.includes('?')) throw fail('it must not contain a query');
  if (url.hash !== '' || text.includes('#')) throw fail('it must not contain a fragment');
  if (url.hostname === '') throw fail('it has no hostname');

  // The path is ignored: the API is found at the origin, and a URL pasted from the browser still works.
  return { baseUrl: url.origin, host: url.host, hostname: url.hostname };
}
