/**
 * Raw HTTP over a socket, for requests that HTTP clients refuse to send (targets that are not URLs, bad
 * percent-escapes, broken headers), and the corpus of malformed requests every server of the product must
 * answer with a 4xx (or, for what Node's own parser rejects, a closed connection) and survive.
 */
import { connect } from 'node:net';

/** What came back for one raw request. */
export interface RawAnswer {
  /** The status of the first answer, or `undefined` when the connection closed without one. */
  status: number | undefined;
  /** Everything received, as latin1 text. */
  text: string;
}

/** Sends `bytes` to `url`'s host and port and reads until the server closes (or `timeoutMs` passes). */
export function rawExchange(url: string, bytes: Buffer | string, timeoutMs = 5_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of answer within ${timeoutMs} ms for ${JSON.stringify(preview(bytes))}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A server that answers and closes may reset the rest of a request it did not read: what arrived counts.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: match ? Number(match[1]) : undefined, text });
    });
    socket.end(bytes);
  });
}

/** The first 80 characters of a request, for failure messages. */
export function preview(bytes: Buffer | string): string {
  const text = typeof bytes === 'string' ? bytes : bytes.toString('latin1');
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** One malformed request of the corpus. */
export interface MalformedRequest {
  name: string;
  bytes: Buffer | string;
  /** Node's HTTP parser refuses it before any handler runs: a 4xx or a closed connection is expected. */
  parser?: boolean;
}

const END = 'Host: 127.0.0.1\r\nConnection: close\r\n\r\n';

function get(target: string, method = 'GET'): string {
  return `${method} ${target} HTTP/1.1\r\n${END}`;
}

function withHeaders(target: string, headers: string, method = 'GET'): string {
  return `${method} ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`;
}

/**
 * Request targets that are not URLs or carry bad escapes, on paths that reach a router and on paths that do not
 * (the emulator's API, the platform's callback, the archivist links both serve, the integrator's `/`), absolute
 * and asterisk forms, very long targets, NUL bytes, traversal, bad query escapes, bad Host and Content-Length
 * headers, and what Node's parser refuses itself.
 */
export const MALFORMED_REQUESTS: MalformedRequest[] = [
  { name: 'a target that is not a URL: //[', bytes: get('//[') },
  { name: 'a target that is not a URL: //[ with a POST', bytes: get('//[', 'POST') },
  { name: 'a target that is not a URL: /[', bytes: get('/[') },
  { name: 'a target that is not a URL: //[::1', bytes: get('//[::1') },
  { name: 'a bad escape at the root: /%ZZ', bytes: get('/%ZZ') },
  { name: 'a bad escape in an API path', bytes: get('/api/v2/organizations/%ZZ/registry-providers') },
  { name: 'a bad escape in a callback path', bytes: get('/api/v2/task-results/%ZZ/callback', 'PATCH') },
  { name: 'a bad escape in an archivist link', bytes: get('/_archivist/v1/object/%ZZ') },
  { name: 'a lone %', bytes: get('/api/v2/organizations/%/registry-providers') },
  {
    name: 'a truncated UTF-8 escape: %E0%A4%A',
    bytes: get('/api/v2/organizations/%E0%A4%A/registry-providers'),
  },
  {
    name: 'an escape that is not UTF-8: %C0%AF',
    bytes: get('/api/v2/task-results/%C0%AF/callback', 'PATCH'),
  },
  { name: 'a surrogate escape: %ED%A0%80', bytes: get('/_archivist/v1/object/%ED%A0%80') },
  { name: 'a bad escape on the POST path', bytes: get('/%ZZ', 'POST') },
  { name: 'absolute form: http://x/', bytes: get('http://x/') },
  { name: 'absolute form, not a URL: http://[/', bytes: get('http://[/') },
  { name: 'absolute form with another scheme: ftp://x/', bytes: get('ftp://x/') },
  {
    name: 'absolute form with a bad escape: http://x/%ZZ',
    bytes: get('http://x/api/v2/task-results/%ZZ/callback'),
  },
  { name: 'asterisk form: OPTIONS *', bytes: get('*', 'OPTIONS') },
  { name: 'asterisk form with GET', bytes: get('*') },
  { name: 'a target without a slash', bytes: get('healthz') },
  { name: 'a very long target (8 000 characters)', bytes: get(`/${'a'.repeat(8_000)}`) },
  { name: 'a very long target of bad escapes', bytes: get(`/api/v2/organizations/${'%ZZ'.repeat(2_000)}/x`) },
  {
    name: 'a target longer than Node reads (20 000 characters)',
    bytes: get(`/${'a'.repeat(20_000)}`),
    parser: true,
  },
  { name: 'a raw NUL byte in the target', bytes: get('/api/\0/x'), parser: true },
  { name: 'an escaped NUL byte in the target', bytes: get('/api/v2/organizations/%00/registry-providers') },
  { name: 'traversal: /..%2f..%2f', bytes: get('/..%2f..%2f..%2fetc%2fpasswd') },
  { name: 'traversal to the state file', bytes: get('/_archivist/v1/object/..%2f..%2fstate.json') },
  { name: 'traversal with dot segments', bytes: get('/../../../etc/passwd') },
  { name: 'a bad escape in the query', bytes: get('/healthz?x=%ZZ') },
  { name: 'a lone % in the query', bytes: get('/api/v2/ping?%') },
  { name: 'a truncated UTF-8 escape in the query', bytes: get('/healthz?q=%E0%A4%A') },
  { name: 'a bad escape in the query of a POST', bytes: get('/?x=%ZZ', 'POST') },
  { name: 'a Host that is not a host: [[[', bytes: withHeaders('/healthz', 'Host: [[[\r\n') },
  { name: 'a Host that is a path', bytes: withHeaders('/healthz', 'Host: ../../etc\r\n') },
  { name: 'a Host with a bad port', bytes: withHeaders('/healthz', 'Host: 127.0.0.1:port\r\n') },
  { name: 'a Host with a user', bytes: withHeaders('/healthz', 'Host: user@127.0.0.1\r\n') },
  { name: 'no Host at all', bytes: withHeaders('/healthz', ''), parser: true },
  {
    name: 'a Content-Length that is not a number',
    bytes: withHeaders('/', 'Host: 127.0.0.1\r\nContent-Length: abc\r\n', 'POST'),
    parser: true,
  },
  {
    name: 'a negative Content-Length',
    bytes: withHeaders('/', 'Host: 127.0.0.1\r\nContent-Length: -1\r\n', 'POST'),
    parser: true,
  },
  {
    name: 'two different Content-Lengths',
    bytes: withHeaders('/', 'Host: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n', 'POST'),
    parser: true,
  },
  {
    name: 'Content-Length and chunked together',
    bytes: withHeaders('/', 'Host: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n', 'POST'),
    parser: true,
  },
  { name: 'a method Node does not know', bytes: get('/', 'BREW'), parser: true },
  { name: 'a method with a bad character', bytes: get('/', 'G@T'), parser: true },
  { name: 'a space in the target', bytes: 'GET /a b HTTP/1.1\r\n' + END, parser: true },
  { name: 'HTTP/0.9', bytes: 'GET /\r\n\r\n', parser: true },
  { name: 'an unknown HTTP version', bytes: 'GET / HTTP/9.9\r\n' + END, parser: true },
  {
    name: 'a header without a colon',
    bytes: withHeaders('/', 'Host: 127.0.0.1\r\nNoColon\r\n'),
    parser: true,
  },
];

/** True when an answer is acceptable for a request of the corpus. */
export function acceptable(request: MalformedRequest, answer: RawAnswer): boolean {
  if (answer.status !== undefined) return answer.status >= 400 && answer.status < 500;
  return request.parser === true;
}

/** A line of a stack trace (`    at fn (file.js:1:2)`), which no server may print for a client's request. */
export const STACK_TRACE = /^\s+at .+:\d+:\d+\)?$/m;
