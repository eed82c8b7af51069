// The platform's side of the integrator benchmark, in its own process on loopback: it answers the callbacks
// (PATCH …/task-results/:id/callback → 200), serves the plan JSON the documented way (307 to a blob URL on
// itself), and counts, per task result, the `running` and the final callbacks. `GET /_stats` reports the counts
// (`?ids=1`: and the task result ids that got a final callback).
// Usage: node bench/integrator/receiver.mjs   (prints {"url"} on its first line; stops on SIGTERM)
import { createServer } from 'node:http';

/**
 * What `GET /_stats` answers.
 * @typedef {object} Stats
 * @property {number} running `running` callbacks
 * @property {number} finals task results with a final callback
 * @property {number} duplicates final callbacks beyond the first of their task result
 * @property {number} refused callbacks answered 422
 * @property {number} [firstFinalAt] ms since the epoch
 * @property {number} [lastFinalAt] ms since the epoch
 * @property {string[]} [ids] with `?ids=1`: the task result ids that got a final callback
 */

/**
 * JSON.parse, typed as what it is until the caller says more.
 * @param {string} text
 * @returns {unknown}
 */
const parseJson = (text) => JSON.parse(text);

const PLAN = JSON.stringify({ format_version: '1.2', terraform_version: '1.9.0', resource_changes: [] });
const CALLBACK = /^\/api\/v2\/task-results\/([^/]+)\/callback$/;
const PLAN_PATH = /^\/api\/v2\/plans\/([^/]+)\/json-output$/;
/** @type {Map<string, number>} final callbacks per task result id */
const finals = new Map();
let running = 0;
let refused = 0;
/** @type {number | undefined} */
let firstFinalAt;
/** @type {number | undefined} */
let lastFinalAt;

const server = createServer((req, res) => {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (/** @type {Buffer} */ c) => chunks.push(c));
  req.on('end', () => {
    const url = req.url ?? '/';
    const callback = CALLBACK.exec(url);
    if (req.method === 'PATCH' && callback) {
      let status;
      try {
        const callbackDoc = /** @type {{ data: { attributes: { status?: string } } }} */ (
          parseJson(Buffer.concat(chunks).toString('utf8'))
        );
        status = callbackDoc.data.attributes.status;
      } catch {
        status = undefined;
      }
      if (!req.headers.authorization?.startsWith('Bearer ') || status === undefined) {
        refused++;
        res.writeHead(422).end();
        return;
      }
      if (status === 'running') running++;
      else {
        const id = /** @type {string} the pattern's one group */ (callback[1]);
        finals.set(id, (finals.get(id) ?? 0) + 1);
        lastFinalAt = Date.now();
        firstFinalAt ??= lastFinalAt;
      }
      res.writeHead(200, { 'content-type': 'application/vnd.api+json' }).end('{}');
      return;
    }
    if (req.method === 'GET' && PLAN_PATH.test(url)) {
      res.writeHead(307, { location: `/_blob/plan?secret=${Math.random().toString(36).slice(2)}` }).end();
      return;
    }
    if (req.method === 'GET' && url.startsWith('/_blob/plan')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(PLAN);
      return;
    }
    if (req.method === 'GET' && url.startsWith('/_stats')) {
      let duplicates = 0;
      for (const n of finals.values()) duplicates += n - 1;
      /** @type {Stats} */
      const stats = { running, finals: finals.size, duplicates, refused, firstFinalAt, lastFinalAt };
      if (url.endsWith('?ids=1')) stats.ids = [...finals.keys()];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
      return;
    }
    res.writeHead(404).end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
