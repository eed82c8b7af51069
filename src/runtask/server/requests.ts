/**
 * One request to the integrator. First, a target that is not a URL, a bad escape or a bad Host → 400; then
 * `GET /healthz`, `GET /metrics`, and a path no route serves → 404. Order of checks on a POST to a route:
 * stopping → 503; body over the limit → 413; signature (when a key is set) → 401 and nothing else happens;
 * empty body or the verification request → 200 and nothing else; not JSON → 400; `payload_version` ≠ 1 → 422;
 * no usable callback (URL on an allowed host, token) → 422; a job record that cannot be written → 503 with
 * Retry-After; otherwise the job is stored and the answer is 200 at once, the check running afterwards.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { admissionProblem } from './admission.js';
import { readBody } from './body.js';
import { SIGNATURE_HEADER, verifySignature } from '../../terraform/runtask/hmac.js';
import type { JobManager } from './jobs.js';
import type { EventLog } from './log.js';
import { tagRequest, type IntegratorMetrics } from './metrics.js';
import {
  PAYLOAD_VERSION,
  isVerificationRequest,
  parseRunTaskRequest,
  type ParsedRunTaskRequest,
} from '../../terraform/runtask/payload.js';
import { parseRequestTarget } from '../../net/requestTarget.js';
import type { IntegratorOptions } from './options.js';

/** One run task the integrator serves: its path, key and platform hosts, and its jobs. */
export interface RouteContext {
  options: Pick<IntegratorOptions, 'path' | 'hmacKey' | 'allowed' | 'bodyLimit'>;
  jobs: JobManager;
  /** The route's log (its events name the route), when it has its own. */
  log?: EventLog;
}

/** What /healthz answers: its HTTP status follows `status`. */
export interface HealthReport {
  status: 'ok' | 'degraded' | 'stopping';
  [detail: string]: unknown;
}

/** What a request handler sees of the integrator. */
export interface RequestContext extends RouteContext {
  log: EventLog;
  stopping: () => boolean;
  /** Several run tasks (`--routes`): each route by its path. Without it, `options.path` is the only one. */
  routes?: ReadonlyMap<string, RouteContext>;
  /** What /healthz says. */
  health: () => HealthReport;
  /** Served on `GET /metrics` when set. */
  metrics?: IntegratorMetrics;
}

/** Seconds a request refused for a failing store is told to wait before it tries again. */
const STORE_RETRY_AFTER_S = 5;

/** The default body limit: 1 MiB. */
export const BODY_LIMIT = 1024 * 1024;

/** A JSON (or empty) answer. */
function send(
  res: ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(text ? { 'content-type': 'application/json' } : {}),
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** A JSON:API error answer. */
export function refuse(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  headers?: Record<string, string>,
): void {
  send(res, status, { errors: [{ status: String(status), title, detail }] }, headers);
}

/** A job id from the task result id when it is a safe file name, else a fresh one. */
function jobId(taskResultId: string | undefined): string {
  return taskResultId !== undefined && /^[A-Za-z0-9_-]{1,128}$/.test(taskResultId)
    ? taskResultId
    : `job-${randomUUID()}`;
}

/** Answers `GET /healthz` and `GET /metrics` (when served); false for any other request. */
async function answerProbe(
  context: RequestContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  const probe = req.method === 'GET' || req.method === 'HEAD';
  if (path === '/healthz' && probe) {
    tagRequest(res, { probe: true });
    // 503 while new jobs would be refused (stopping, or a journal that cannot be written), so that a load
    // balancer sends them elsewhere; the jobs already accepted run and report either way.
    const health = context.health();
    send(res, health.status === 'ok' ? 200 : 503, health);
    return true;
  }
  if (path === '/metrics' && probe && context.metrics !== undefined) {
    tagRequest(res, { probe: true });
    const text = await context.metrics.text();
    res.writeHead(200, {
      'content-type': context.metrics.contentType,
      'content-length': String(Buffer.byteLength(text)),
    });
    res.end(text);
    return true;
  }
  return false;
}

/** The route a path is served by: the only one, or one of `context.routes`. */
function routeAt(context: RequestContext, path: string): RouteContext | undefined {
  if (context.routes !== undefined) return context.routes.get(path);
  return path === context.options.path ? context : undefined;
}

/** Who sent a request, and where its answer goes. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  log: EventLog;
  remote: string | undefined;
}

/**
 * Reads the body of a POST to a route, refusing it on a worker, while stopping, over the limit, or when its
 * signature does not match the route's key; the body's text, or undefined once the request is answered.
 */
async function readSignedBody(
  context: RequestContext,
  route: RouteContext,
  { req, res, log, remote }: Exchange,
): Promise<string | undefined> {
  const { options, jobs } = route;
  if (jobs.serving === 'worker') {
    // Only a load balancer set up to send requests to workers too gets here: it should try a front instead.
    req.resume();
    log.warn('request.rejected', 'refused a request: this instance is a worker (--role worker)', {
      http: 503,
      remote,
    });
    refuse(
      res,
      503,
      'worker only',
      'this integrator instance runs queued checks only (--role worker): send run task requests to a front (--role front or all)',
    );
    return undefined;
  }
  const body = await readBody(req, options.bodyLimit ?? BODY_LIMIT);
  if (context.stopping()) {
    log.warn('request.rejected', 'refused a request: the integrator is stopping', { http: 503, remote });
    refuse(res, 503, 'stopping', 'the integrator is shutting down; retry', { connection: 'close' });
    return undefined;
  }
  if (body === 'too-large') {
    log.warn('request.rejected', 'refused a request: body over the limit', { http: 413, remote });
    refuse(res, 413, 'payload too large', `the body is over ${options.bodyLimit ?? BODY_LIMIT} bytes`);
    return undefined;
  }
  if (
    options.hmacKey !== undefined &&
    !verifySignature(options.hmacKey, body, req.headers[SIGNATURE_HEADER])
  ) {
    const reason = req.headers[SIGNATURE_HEADER] ? 'signature does not match' : 'no signature';
    log.warn('request.rejected', `refused a request: ${reason}`, { http: 401, remote });
    refuse(res, 401, 'unauthorized', 'the X-TFC-Task-Signature header is missing or does not match the body');
    return undefined;
  }
  // Decoded once: the emptiness check and the parse read the same text.
  return body.toString('utf8');
}

/** A run task request that may become a job. */
type RunTask = Extract<ParsedRunTaskRequest, { kind: 'request' }>;

/**
 * Reads a signed body as a run task request: answers the verification requests (empty, or the platform's test)
 * with 200 and refuses what is not JSON, not payload version 1, or has no usable callback; the request, or
 * undefined once the request is answered.
 */
function readRunTask(text: string, route: RouteContext, { res, log, remote }: Exchange): RunTask | undefined {
  if (text.trim() === '') {
    log.info('request.verification', 'answered a verification request (empty body)', { remote });
    tagRequest(res, { outcome: 'verification' });
    send(res, 200);
    return undefined;
  }
  const parsed = parseRunTaskRequest(text);
  if (parsed.kind === 'malformed') {
    log.warn('request.rejected', `refused a request: ${parsed.reason}`, { http: 400, remote });
    refuse(res, 400, 'bad request', parsed.reason);
    return undefined;
  }
  const { request, raw } = parsed;
  if (isVerificationRequest(request)) {
    log.info('request.verification', 'answered a verification request', { remote, stage: request.stage });
    tagRequest(res, { outcome: 'verification' });
    send(res, 200);
    return undefined;
  }
  if (request.payload_version !== PAYLOAD_VERSION) {
    const version = JSON.stringify(raw.payload_version ?? null);
    log.warn('request.rejected', `refused a request: payload_version ${version}`, { http: 422, remote });
    refuse(
      res,
      422,
      'unsupported payload_version',
      `payload_version ${version} is not 1, the only one understood`,
    );
    return undefined;
  }
  const problem = admissionProblem(request, route.options.allowed);
  if (problem !== undefined) {
    log.error('request.rejected', `refused a request: ${problem}`, {
      http: 422,
      remote,
      run_id: request.run_id,
    });
    refuse(res, 422, 'cannot report a result', problem);
    return undefined;
  }
  return parsed;
}

/**
 * Makes a job of a run task request: 200 once its record is stored (or when it is a copy of a job already
 * running), 503 with Retry-After when its record cannot be stored.
 */
async function acceptJob(jobs: JobManager, task: RunTask, { res, log, remote }: Exchange): Promise<void> {
  const { request, raw, ignored } = task;
  const id = jobId(request.task_result_id);
  const fields = { job: id, run_id: request.run_id, stage: request.stage };
  if (ignored.length > 0)
    log.warn('request.fields_ignored', `fields with an unexpected type: ${ignored.join(', ')}`, fields);
  const accepted = jobs.has(id) ? 'duplicate' : await jobs.accept({ id, request, raw });
  if (accepted === 'duplicate') {
    log.info('request.duplicate', 'the platform re-sent a request for a job already running', fields);
    tagRequest(res, { outcome: 'duplicate' });
    return send(res, 200);
  }
  if (accepted === 'unsaved') {
    // Before the 200, a job that cannot be stored is refused: the platform retries (here once the state dir
    // works again, or on another instance). Accepted, a restart could drop it without the platform knowing.
    const problem = jobs.storeHealth().lastProblem?.code ?? 'an error';
    log.error(
      'request.rejected',
      `refused a request: cannot write its job record in ${jobs.storeKind === 'journal' ? 'the state dir' : 'the database'} (${problem})`,
      {
        ...fields,
        http: 503,
        remote,
      },
    );
    return refuse(
      res,
      503,
      'cannot store the job',
      `the integrator cannot write its ${jobs.storeKind === 'journal' ? 'state dir' : 'database'} (${problem}); the check was not started: retry later`,
      { 'retry-after': String(STORE_RETRY_AFTER_S) },
    );
  }
  log.info(
    'job.accepted',
    `accepted ${request.stage ?? 'a'} check for run ${request.run_id ?? '(no run id)'}`,
    {
      ...fields,
      organization: request.organization_name,
      workspace: request.workspace_name,
      enforcement: request.task_result_enforcement_level,
      speculative: request.is_speculative,
      outcomes_offered: request.capabilities?.outcomes === true,
    },
  );
  send(res, 200);
}

/** Handles one request; resolves once the answer is sent. */
export async function handleRequest(
  context: RequestContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const remote = req.socket.remoteAddress;
  const target = parseRequestTarget(req.url, req.headers.host);
  if (!target.ok) {
    context.log.warn('request.rejected', `refused a request: ${target.reason}`, { http: 400, remote });
    req.resume();
    return refuse(res, 400, 'bad request', target.reason);
  }
  const { path } = target.target;
  if (await answerProbe(context, req, res, path)) return;
  const route = routeAt(context, path);
  if (route === undefined) {
    // With several routes, the others are not named: each tenant knows its own URL only.
    const detail =
      context.routes === undefined
        ? `run task requests go to ${context.options.path}`
        : 'no run task is served at this path';
    return refuse(res, 404, 'not found', detail);
  }
  tagRequest(res, { route: route.options.path });
  const exchange: Exchange = { req, res, log: route.log ?? context.log, remote };
  if (req.method !== 'POST') {
    return refuse(res, 405, 'method not allowed', 'run task requests are POSTs', { allow: 'POST' });
  }
  const text = await readSignedBody(context, route, exchange);
  if (text === undefined) return;
  const task = readRunTask(text, route, exchange);
  if (task !== undefined) await acceptJob(route.jobs, task, exchange);
}
