/**
 * A request that got no answer, in words a user can act on. Most are the network's (a reset, a timeout, a
 * refused connection) and worth another try; a TLS handshake that meets a server speaking something else,
 * most often plain HTTP (`--hostname 127.0.0.1:8080` for `http://127.0.0.1:8080`), is a setting to change,
 * and says so instead of "check the network".
 */
/** What kind of failure it was, and the short reason that goes into messages. */
export interface NetworkFailure {
  /** `the server did not answer TLS (EPROTO)`, `the TLS handshake failed (ERR_SSL_…)`, or the error code. */
  reason: string;
  /** `plain-http`: an https:// request answered without TLS; `tls`: another TLS failure; else `network`. */
  kind: 'plain-http' | 'tls' | 'network';
}

// OpenSSL's words (and Node's ERR_SSL_* codes) when the bytes that came back are not a TLS record: an HTTP
// answer ("HTTP/1.1 400") read as a record header has a wrong version number or an absurd length.
const NOT_TLS =
  /wrong[ _]version[ _]number|packet[ _]length[ _]too[ _]long|http[ _]request|unknown[ _]protocol/i;

/**
 * Classifies an error that came without an HTTP answer (got's RequestError, or any error with a `code`);
 * `fallback` is the reason given for a plain network failure (the caller's wording, usually the code).
 */
export function describeNetworkFailure(error: unknown, fallback: string): NetworkFailure {
  const code = codeOf(error);
  const text = `${code ?? ''} ${messagesOf(error)}`;
  const isTls = code === 'EPROTO' || (code?.startsWith('ERR_SSL_') ?? false) || /SSL routines/i.test(text);
  if (isTls && NOT_TLS.test(text)) {
    return { kind: 'plain-http', reason: `the server did not answer TLS (${code ?? 'EPROTO'})` };
  }
  if (isTls) return { kind: 'tls', reason: `the TLS handshake failed (${code ?? 'EPROTO'})` };
  return { kind: 'network', reason: fallback };
}

/**
 * What to do about a failure met on `host` (`host[:port]` of an https:// URL): for the API, the setting that
 * names the server; for a link the registry handed out (upload, download), the registry's own address.
 */
export function networkHint(
  failure: NetworkFailure,
  host: string,
  where: 'api' | 'link',
  otherwise: string,
): string {
  if (failure.kind === 'network') return otherwise;
  if (where === 'link') {
    return `The registry's link points to https://${host}, which ${failure.kind === 'plain-http' ? 'answered in plain HTTP, not TLS' : 'failed the TLS handshake'}: the registry's configured address is wrong; fix it on the server, then run the command again.`;
  }
  if (failure.kind === 'plain-http') {
    return `${host} answered in plain HTTP, not TLS: a plain-HTTP server is given as http://host:port — give it as http://${host} (in --hostname, TFE_HOSTNAME or the configuration file); a host without http:// means https.`;
  }
  return `The TLS handshake with ${host} failed: check that it serves HTTPS on that port (a plain-HTTP server is given as http://${host}), then run the command again.`;
}

function codeOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
  }
  return undefined;
}

function messagesOf(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    parts.push(e.message);
  }
  return parts.join(' ');
}
