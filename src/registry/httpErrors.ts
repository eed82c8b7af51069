/**
 * Turning the registry's refusals into ApiError: the server's own words (JSON:API `errors[]`, or the
 * string-array form some registry endpoints use) plus a hint that says what to do for each status.
 */
import { tokenAdvice, type ApiHost } from '../config/index.js';
import { ApiError } from '../errors.js';
import { networkHint, type NetworkFailure } from '../net/networkFailure.js';
import { readErrors } from '../terraform/jsonapiErrors.js';

/** The hint of a publish stopped midway (Ctrl-C, a transfer that kept failing): a re-run resumes. */
export const RESUME_HINT =
  'Run the same command again to finish: what is already in the registry is kept and not duplicated.';

/** An ApiError for an HTTP error answer. */
export function toApiError(
  apiHost: ApiHost,
  method: string,
  path: string,
  status: number,
  body: string,
  env: Record<string, string | undefined> = {},
): ApiError {
  const objects = readErrors(body);
  const detail = objects
    .map(
      (e) =>
        [e.title, e.detail].filter(Boolean).join(': ') + (e.source?.pointer ? ` (${e.source.pointer})` : ''),
    )
    .filter((text) => text !== '')
    .join('; ');
  const message = `${method} ${path} was refused: ${status}${detail ? ` ${detail}` : ''}`;
  return new ApiError(message, {
    status,
    serverDetail: detail || undefined,
    hint: hintFor(apiHost, status, detail, env),
    details: { status, method, path, errors: objects },
  });
}

/**
 * An ApiError for a request that got no usable answer (network error, timeout, a server that does not speak
 * TLS); status 0. A TLS failure names the setting to change rather than the network.
 */
export function unreachableError(
  apiHost: ApiHost,
  method: string,
  path: string,
  failure: NetworkFailure,
): ApiError {
  const what = failure.reason;
  return new ApiError(`${method} ${path} on ${apiHost.baseUrl} failed: ${what}`, {
    status: 0,
    hint: networkHint(
      failure,
      apiHost.host,
      'api',
      `Check --hostname (${apiHost.host}) and the network, then run the command again.`,
    ),
    details: { method, path, reason: what },
  });
}

function hintFor(
  apiHost: ApiHost,
  status: number,
  detail: string,
  env: Record<string, string | undefined>,
): string {
  switch (status) {
    case 401:
      return `The token for ${apiHost.host} is missing, invalid or expired. ${tokenAdvice(apiHost, env)}`;
    case 403:
      return 'The token may not do this here: check the organization and namespace, and that the registry is the private one.';
    case 404:
      return 'Not found — or the token may not see it (the platform answers 404 for both). Check --organization, --namespace and --name, and that the token belongs to the owners team or a team with "Manage Private Registry".';
    case 409:
      return 'The registry holds something that conflicts with this request; read its current state and run again.';
    case 422:
      return detail
        ? `The registry refused a value: ${detail}. Fix it and run again.`
        : 'The registry refused a value; run with --verbose to see the request.';
    case 429:
      return 'The registry kept rate-limiting the requests; wait a minute and run the same command again.';
    default:
      return status >= 500
        ? 'The registry failed to answer after several retries; try again later.'
        : 'Run with --verbose to see the requests and answers.';
  }
}
