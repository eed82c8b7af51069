// The run task requests of figure 6: the request `provider runtask send` builds (every documented field, in
// the documented order; src/runtask/send/request.ts) for a post_plan stage, with its task result id, callback
// and plan URLs on the local receiver, signed as the platform signs (src/terraform/runtask/hmac.ts). It uses the built
// program (dist/), loaded when the figure starts, so that `npm run bench` can say "build first" before that.
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../lib/env.mjs';

/**
 * A module of the built program (typed by the caller, from its source in src/).
 * @param {string} file
 * @returns {Promise<unknown>}
 */
const dist = (file) => import(pathToFileURL(path.join(ROOT, 'dist', file)).href);

/**
 * One request of the load: its body and headers.
 * @typedef {object} SignedRequest
 * @property {Buffer} body
 * @property {Record<string, string>} headers
 */

/**
 * Resolves with `signedRequest(n, platformUrl)`: request n's body and headers, signed with `key`.
 * @param {string} key
 * @returns {Promise<(n: number, platformUrl: string) => SignedRequest>}
 */
export async function requestSigner(key) {
  const { issueTask } = /** @type {typeof import('../../src/emulator/runtask/issue.js')} */ (
    await dist('emulator/runtask/issue.js')
  );
  const { buildRunTaskRequest, requestBytes, PLATFORM_USER_AGENT } =
    /** @type {typeof import('../../src/runtask/send/request.js')} */ (await dist('runtask/send/request.js'));
  const { signBody } = /** @type {typeof import('../../src/terraform/runtask/hmac.js')} */ (
    await dist('terraform/runtask/hmac.js')
  );
  /** @type {Parameters<typeof issueTask>[1]} */
  const setup = {
    stage: 'post_plan',
    enforcement: 'mandatory',
    outcomesOffered: true,
    organization: 'bench',
    workspace: 'bench',
  };
  return (n, platformUrl) => {
    // Ids the receiver can tell apart and the figure can match with the accepted requests.
    const id = `taskrs-bench${String(n).padStart(7, '0')}`;
    const issued = issueTask(platformUrl, setup, 'run', Date.now());
    const body = requestBytes(
      buildRunTaskRequest({
        ...issued,
        taskResultId: id,
        callbackUrl: `${platformUrl}/api/v2/task-results/${id}/callback`,
        planJsonApiUrl: `${platformUrl}/api/v2/plans/plan-${id}/json-output`,
      }),
    );
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': PLATFORM_USER_AGENT,
        'x-tfc-task-signature': signBody(key, body),
      },
    };
  };
}
