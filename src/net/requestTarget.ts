/**
 * The first step of every server the product runs (the emulator, the run task platform of `runtask send`, the
 * integrator): reading the request target and the Host header into a path and a query, or into the reason for a
 * 400. Nothing after this step parses `req.url` again, so a target that is not a URL (`//[`), a bad escape
 * (`%ZZ`, `%E0%A4%A`) or a Host that is not a host is one client's mistake, answered 400, never an exception
 * that ends the server or a 500 with a stack trace. Node's own parser has already refused what is not HTTP.
 */

/** A request target a route may use: the path (still percent-encoded) and the query. */
export interface RequestTarget {
  /** The path, percent-encoded as sent, dot segments resolved (`/a/../b` is `/b`). */
  path: string;
  /** The query with its `?`, or `''`. */
  search: string;
  query: URLSearchParams;
}

/** The target, or why it is refused (a sentence for a 400 `detail`, which never quotes the target). */
export type TargetResult = { ok: true; target: RequestTarget } | { ok: false; reason: string };

// Only for parsing: origin-form targets are appended to it, so that `//x/y` keeps its path instead of becoming
// the path `/y` of host `x`.
const ORIGIN = 'http://request.invalid';

// RFC 9110 §7.2: uri-host [ ":" port ], the host a reg-name, an IPv4 address or an IP literal in brackets.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::\d{0,5})?$/;

/**
 * Reads `req.url` and the Host header. Accepted: origin-form (`/path?query`) and absolute-form with http or
 * https (`http://host/path`, RFC 9112 §3.2.2); refused: the asterisk form (no route serves the server as a
 * whole), anything else, escapes that are not `%` and two hex digits or do not decode to UTF-8, in the path or
 * the query, and a Host header that is not `host[:port]`.
 */
export function parseRequestTarget(url: string | undefined, host: string | undefined): TargetResult {
  const raw = url ?? '/';
  let parsed: URL;
  try {
    if (raw.startsWith('/')) {
      // Read as every URL parser reads it first: `//[` is a host that is not one, not a path to serve.
      new URL(raw, ORIGIN);
      parsed = new URL(ORIGIN + raw);
    } else if (/^https?:\/\//i.test(raw)) parsed = new URL(raw);
    else return refused('The request target must be a path (/…) or an http:// or https:// URL.');
  } catch {
    return refused('The request target is not a valid URL.');
  }
  if (!decodes(parsed.pathname)) {
    return refused('The request path has a percent-escape that is not valid (%XX, decoding to UTF-8).');
  }
  if (!decodes(parsed.search.slice(1).replace(/\+/g, ' '))) {
    return refused('The query string has a percent-escape that is not valid (%XX, decoding to UTF-8).');
  }
  if (host !== undefined && !HOST.test(host)) {
    return refused('The Host header is not a host name or address with an optional port.');
  }
  return { ok: true, target: { path: parsed.pathname, search: parsed.search, query: parsed.searchParams } };
}

function refused(reason: string): TargetResult {
  return { ok: false, reason };
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
