/**
 * The run task side of the platform on a real HTTP port: it issues task results (token, task result id,
 * callback URL), judges callbacks like the platform, serves the plan JSON through a 307 and the configuration
 * version through a 302 to short-lived blob links (`/_archivist/v1/object/<secret>`, no token), answers
 * `GET /api/v2/ping` (go-tfe calls it first), and records every event for `runtask send`, requests to the
 * paths it does not serve (404) included.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  HttpProblem,
  Router,
  listenLocally,
  readBody,
  readTarget,
  requestListener,
  sendProblem,
  type EmulatedServer,
  type EmulatedServerOptions,
  type RequestContext,
} from '../http.js';
import { LinkSigner } from '../links.js';
import { PlatformEvents } from './events.js';
import { issueTask, type IssuedTask, type RunTaskSetup } from './issue.js';
import { registerRunTaskRoutes, type StoredBlob } from './routes.js';
import { PlatformTaskResult, type TaskWindows } from './taskResult.js';

/** How to start the platform. */
export interface RunTaskPlatformOptions extends TaskWindows, EmulatedServerOptions {
  /** The base URL put in requests, when the integrator reaches this machine under another name. */
  publicUrl?: string | undefined;
  /** Lifetime of blob links (default 1 minute, as documented for the plan JSON link). */
  blobTtlMs?: number;
}

/** A running run task platform; its `url` is the base URL in requests. */
export interface RunTaskPlatform extends EmulatedServer {
  events: PlatformEvents;
  /** Issues a task result for a run task request and stores its plan and configuration version. */
  issueRun(setup: RunTaskSetup): PlatformTaskResult;
  /** Issues the dummy task of the verification request (any callback to it is a violation). */
  issueVerification(setup: Pick<RunTaskSetup, 'stage' | 'outcomesOffered'>): PlatformTaskResult;
}

const BODY_LIMIT = 16 * 1024 * 1024;

/** Requests to unserved paths listed one by one; past this, one warning says the rest are not. */
const UNSERVED_LISTED = 50;

/** Starts the platform and resolves once it listens. */
export async function startRunTaskPlatform(options: RunTaskPlatformOptions): Promise<RunTaskPlatform> {
  const now = options.now ?? Date.now;
  const events = new PlatformEvents();
  const tasks = new Map<string, PlatformTaskResult>();
  const blobs = new Map<string, StoredBlob>();
  const links = new LinkSigner(randomBytes(32).toString('hex'), options.blobTtlMs ?? 60_000);
  let baseUrl = '';
  let unserved = 0;
  /** Records a request to a path no route serves (shown in the timeline: a real platform may answer it). */
  const noteUnserved = (method: string, path: string): void => {
    unserved++;
    if (unserved <= UNSERVED_LISTED) {
      const shown = path.length > 200 ? `${path.slice(0, 199)}…` : path;
      events.add({ kind: 'unserved', at: now(), method: method.slice(0, 20), path: shown, http: 404 });
    } else if (unserved === UNSERVED_LISTED + 1) {
      const message = `more than ${UNSERVED_LISTED} requests to paths the local platform does not serve: the rest are not listed`;
      events.add({ kind: 'warning', at: now(), message });
    }
  };
  const router = new Router();
  registerRunTaskRoutes(router, { tasks, blobs, links, events, now, baseUrl: () => baseUrl });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    try {
      const url = readTarget(req);
      const ctx: RequestContext = {
        req,
        res,
        method,
        path: url.path,
        query: url.query,
        params: {},
        body: undefined,
      };
      const match = router.match(method, url.path);
      if (!match.route) {
        req.resume();
        noteUnserved(method, url.path);
        throw new HttpProblem(404, [{ status: '404', title: 'not found' }]);
      }
      ctx.params = match.params;
      ctx.body = await readBody(req, BODY_LIMIT);
      await match.route.handler(ctx);
    } catch (error) {
      if (!(error instanceof HttpProblem)) throw error;
      if (res.headersSent) return void res.destroy();
      // The body of a refused request is not read: drain it, so that the client reads the answer.
      req.resume();
      sendProblem(res, error);
    }
  };
  const server = createServer(requestListener(handle, options.onError));
  const listening = await listenLocally(server, options, 'the local platform');
  baseUrl = (options.publicUrl ?? listening.url).replace(/\/+$/, '');

  const add = (issued: IssuedTask): PlatformTaskResult => {
    const task = new PlatformTaskResult(issued, options, events, now);
    tasks.set(issued.guid, task);
    return task;
  };
  const defaults = {
    enforcement: 'mandatory',
    organization: 'test-org',
    workspace: 'test-workspace',
  } as const;
  return {
    url: baseUrl,
    events,
    issueRun(setup) {
      const task = add(issueTask(baseUrl, setup, 'run', now()));
      const { planId, configurationVersionId } = task.issued;
      if (task.issued.planJsonApiUrl !== undefined)
        blobs.set(planId, { bytes: setup.planJson, contentType: 'application/json', what: 'plan-json' });
      blobs.set(configurationVersionId, {
        bytes: setup.configurationVersion,
        contentType: 'application/octet-stream',
        what: 'configuration-version',
      });
      return task;
    },
    issueVerification(setup) {
      return add(issueTask(baseUrl, { ...defaults, ...setup }, 'verification', now()));
    },
    async close() {
      for (const task of tasks.values()) task.stopTimers();
      await listening.close();
    },
  };
}
