/**
 * The run task routes of the platform: the callback (judged by the task result), the plan JSON (307) and the
 * configuration version (302), both with the run's access token, the blob links they point to (no token: the
 * signed secret in the path is the credential, and it expires), and the API ping.
 */
import type { ServerResponse } from 'node:http';
import { HttpProblem, sendDocument, type RequestContext, type Router } from '../http.js';
import { ARCHIVIST_PREFIX, type LinkSigner } from '../links.js';
import type { DownloadEvent, PlatformEvents } from './events.js';
import { receiveCallback } from './callback.js';
import type { PlatformTaskResult } from './taskResult.js';
import { JSONAPI } from '../../terraform/names.js';

/** A stored download: the plan JSON or the configuration version. */
export interface StoredBlob {
  bytes: Buffer;
  contentType: string;
  what: 'plan-json' | 'configuration-version';
}

/** What the routes share. */
export interface RouteState {
  tasks: Map<string, PlatformTaskResult>;
  blobs: Map<string, StoredBlob>;
  links: LinkSigner;
  events: PlatformEvents;
  now: () => number;
  baseUrl: () => string;
}

const CALLBACK = '/api/v2/task-results/:guid/callback';

function refused(
  state: RouteState,
  what: DownloadEvent['what'],
  status: number,
  detail: string,
): HttpProblem {
  state.events.add({ kind: 'download', at: state.now(), what, http: status, detail });
  const title = status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : 'not found';
  return new HttpProblem(status, [{ status: String(status), title, detail }]);
}

/** The task whose access token is in the Authorization header; 401 otherwise (as the API answers). */
function taskOfToken(
  ctx: RequestContext,
  state: RouteState,
  what: DownloadEvent['what'],
): PlatformTaskResult {
  const header = ctx.req.headers.authorization;
  for (const task of state.tasks.values()) if (task.acceptsToken(header)) return task;
  throw refused(
    state,
    what,
    401,
    header === undefined ? 'no token' : 'the token is not a valid access token',
  );
}

function redirect(
  ctx: RequestContext,
  state: RouteState,
  status: 302 | 307,
  key: string,
  what: DownloadEvent['what'],
): void {
  const location = state.links.sign(state.baseUrl(), 'get', key, state.now());
  state.events.add({ kind: 'download', at: state.now(), what, http: status });
  ctx.res.writeHead(status, { location, 'content-length': 0 }).end();
}

function sendBlob(res: ServerResponse, blob: StoredBlob): void {
  res.writeHead(200, { 'content-type': blob.contentType, 'content-length': blob.bytes.length });
  res.end(blob.bytes);
}

/** Registers the run task routes. */
export function registerRunTaskRoutes(router: Router, state: RouteState): void {
  const callback = (ctx: RequestContext): void => {
    const task = state.tasks.get(ctx.params.guid ?? '');
    if (task === undefined) {
      state.events.add({
        kind: 'callback',
        at: state.now(),
        method: ctx.method,
        http: 404,
        outcomes: 0,
        violations: [
          {
            rule: 'callback-url',
            message: `a callback to ${ctx.path}, which names no task result: use task_result_callback_url exactly as sent`,
          },
        ],
      });
      throw new HttpProblem(404, [{ status: '404', title: 'not found' }]);
    }
    const answer = receiveCallback(task, {
      method: ctx.method,
      authorization: ctx.req.headers.authorization,
      contentType: ctx.req.headers['content-type'],
      body: ctx.body ?? Buffer.alloc(0),
    });
    const body = JSON.stringify(answer.document);
    ctx.res.writeHead(answer.http, {
      ...answer.headers,
      'content-type': JSONAPI,
      'content-length': Buffer.byteLength(body),
    });
    ctx.res.end(body);
  };
  for (const method of ['PATCH', 'POST', 'PUT', 'GET', 'DELETE']) router.on(method, CALLBACK, callback);

  router.on('GET', '/api/v2/plans/:plan/json-output', (ctx) => {
    const task = taskOfToken(ctx, state, 'plan-json');
    const { planId, planJsonApiUrl } = task.issued;
    if (planJsonApiUrl === undefined || ctx.params.plan !== planId || !state.blobs.has(planId))
      throw refused(state, 'plan-json', 404, 'this token cannot read that plan');
    redirect(ctx, state, 307, planId, 'plan-json');
  });

  router.on('GET', '/api/v2/configuration-versions/:cv/download', (ctx) => {
    const task = taskOfToken(ctx, state, 'configuration-version');
    const id = task.issued.configurationVersionId;
    if (ctx.params.cv !== id || !state.blobs.has(id))
      throw refused(state, 'configuration-version', 404, 'this token cannot read that configuration version');
    redirect(ctx, state, 302, id, 'configuration-version');
  });

  router.on('GET', `${ARCHIVIST_PREFIX}:secret`, (ctx) => {
    const grant = state.links.verify(ctx.params.secret ?? '', state.now());
    if (grant === undefined || grant.op !== 'get')
      throw refused(state, 'blob', 403, 'This link is not a valid download link, or it has expired.');
    const blob = state.blobs.get(grant.key);
    if (blob === undefined) throw refused(state, 'blob', 404, 'no such object');
    state.events.add({
      kind: 'download',
      at: state.now(),
      what: 'blob',
      http: 200,
      bytes: blob.bytes.length,
      detail: blob.what,
    });
    sendBlob(ctx.res, blob);
  });

  router.on('GET', '/api/v2/ping', (ctx) => {
    ctx.res.writeHead(204, { 'tfp-api-version': '2.6', 'tfp-appname': 'provider runtask send' }).end();
  });
  router.on('GET', '/healthz', (ctx) => sendDocument(ctx.res, 200, { status: 'ok' }));
}
