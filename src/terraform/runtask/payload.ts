/**
 * The run task wire types, shared by the integrator (`runtask serve`, `runtask callback`) and the platform-side
 * driver (`runtask send`): the request the platform POSTs (reference/run-tasks.md §1), the result an integrator
 * reports (§4.2/§4.3) and the JSON:API callback document that carries it. Every request field is optional
 * (real captures omit `capabilities` and the configuration-version fields), so parsing keeps the raw object
 * for handlers and builds a typed view of only the fields that have their documented type.
 */
import type { OutcomeTag, TaskResult, TaskResultStatus } from './result.js';

export {
  TASK_RESULT_STATUSES,
  TAG_LEVELS,
  RESULT_LIMITS,
  checkTaskResult,
  resultFromCallbackDocument,
  type TaskResultStatus,
  type FinalTaskResultStatus,
  type TagLevel,
  type OutcomeTag,
  type Outcome,
  type TaskResult,
  type ResultProblem,
  type CheckedTaskResult,
} from './result.js';
export { trimTaskResult, type TrimmedTaskResult } from './trim.js';

/** The four stages a run task can be attached to. */
export const RUN_TASK_STAGES = ['pre_plan', 'post_plan', 'pre_apply', 'post_apply'] as const;
export type RunTaskStage = (typeof RUN_TASK_STAGES)[number];

/** Stages whose payload carries `plan_json_api_url` (current API-REF; older docs omit `post_apply`). */
export const PLAN_JSON_STAGES: readonly RunTaskStage[] = ['post_plan', 'pre_apply', 'post_apply'];

/** The only `payload_version` the platform sends and the integrator understands. */
export const PAYLOAD_VERSION = 1;

/** The dummy access token of the verification request sent when a run task is created (run-tasks.md §1.6). */
export const VERIFICATION_TOKEN = 'test-token';

/** The run task request body (run-tasks.md §1.3), every field optional; `null` where the docs say so. */
export interface RunTaskRequest {
  payload_version?: number;
  stage?: RunTaskStage | (string & {});
  access_token?: string;
  capabilities?: { outcomes?: boolean };
  configuration_version_download_url?: string | null;
  configuration_version_id?: string;
  is_speculative?: boolean;
  organization_name?: string;
  plan_json_api_url?: string;
  project_id?: string;
  project_name?: string;
  project_app_url?: string;
  run_app_url?: string;
  run_created_at?: string;
  run_created_by?: string;
  run_id?: string;
  run_message?: string;
  task_result_callback_url?: string;
  task_result_enforcement_level?: 'mandatory' | 'advisory' | (string & {});
  task_result_id?: string;
  vcs_branch?: string | null;
  vcs_commit_url?: string | null;
  vcs_commit_hash?: string | null;
  vcs_pull_request_url?: string | null;
  vcs_repo_url?: string | null;
  workspace_app_url?: string;
  workspace_id?: string;
  workspace_name?: string;
  workspace_working_directory?: string;
}

type FieldType = 'string' | 'nullable-string' | 'number' | 'boolean' | 'capabilities';

const FIELD_TYPES: Record<keyof RunTaskRequest, FieldType> = {
  payload_version: 'number',
  stage: 'string',
  access_token: 'string',
  capabilities: 'capabilities',
  configuration_version_download_url: 'nullable-string',
  configuration_version_id: 'string',
  is_speculative: 'boolean',
  organization_name: 'string',
  plan_json_api_url: 'string',
  project_id: 'string',
  project_name: 'string',
  project_app_url: 'string',
  run_app_url: 'string',
  run_created_at: 'string',
  run_created_by: 'string',
  run_id: 'string',
  run_message: 'string',
  task_result_callback_url: 'string',
  task_result_enforcement_level: 'string',
  task_result_id: 'string',
  vcs_branch: 'nullable-string',
  vcs_commit_url: 'nullable-string',
  vcs_commit_hash: 'nullable-string',
  vcs_pull_request_url: 'nullable-string',
  vcs_repo_url: 'nullable-string',
  workspace_app_url: 'string',
  workspace_id: 'string',
  workspace_name: 'string',
  workspace_working_directory: 'string',
};

/** What a request body turned out to be. */
export type ParsedRunTaskRequest =
  | { kind: 'malformed'; reason: string }
  | {
      kind: 'request';
      /** The fields that have their documented type. */
      request: RunTaskRequest;
      /** The whole object as sent, unknown fields included. */
      raw: Record<string, unknown>;
      /** Known fields dropped from `request` because their type was not the documented one. */
      ignored: string[];
    };

function hasType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'nullable-string':
      return value === null || typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'capabilities':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

/** Parses the raw bytes of a run task request; only non-JSON or a non-object body counts as malformed. */
export function parseRunTaskRequest(body: Buffer | string): ParsedRunTaskRequest {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch (error) {
    return { kind: 'malformed', reason: `the body is not JSON (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { kind: 'malformed', reason: 'the body is JSON but not an object' };
  }
  return { kind: 'request', ...readRunTaskRequest(value as Record<string, unknown>) };
}

/** The typed view of a request object: known fields with their documented type; the others are listed. */
export function readRunTaskRequest(raw: Record<string, unknown>): {
  request: RunTaskRequest;
  raw: Record<string, unknown>;
  ignored: string[];
} {
  const request: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, type] of Object.entries(FIELD_TYPES)) {
    if (!(key in raw) || raw[key] === undefined) continue;
    if (hasType(raw[key], type)) request[key] = raw[key];
    else ignored.push(key);
  }
  const capabilities = request.capabilities as Record<string, unknown> | undefined;
  if (capabilities !== undefined && typeof capabilities.outcomes !== 'boolean') {
    request.capabilities = {};
  }
  return { request, raw, ignored };
}

/**
 * True for the verification request the platform sends when a run task is created or tested: the documented
 * dummy token `test-token`, or `test` as the stage or the enforcement level (run-tasks.md §1.6).
 */
export function isVerificationRequest(request: RunTaskRequest): boolean {
  return (
    request.access_token === VERIFICATION_TOKEN ||
    request.stage === 'test' ||
    request.task_result_enforcement_level === 'test'
  );
}

/** True only when the platform said it accepts outcomes (`capabilities.outcomes: true`). */
export function acceptsOutcomes(request: RunTaskRequest): boolean {
  return request.capabilities?.outcomes === true;
}

/** A copy of the raw request without the access token, as handlers get it. */
export function withoutAccessToken(raw: Record<string, unknown>): Record<string, unknown> {
  const { access_token: _token, ...rest } = raw;
  return rest;
}

/** The JSON:API callback document (run-tasks.md §4.2, outcomes under `data.relationships.outcomes.data`). */
export interface CallbackDocument {
  data: {
    type: 'task-results';
    attributes: { status: TaskResultStatus; message?: string; url?: string };
    relationships?: {
      outcomes: {
        data: Array<{
          type: 'task-result-outcomes';
          attributes: {
            'outcome-id': string;
            description: string;
            body?: string;
            url?: string;
            tags?: Record<string, OutcomeTag[]>;
          };
        }>;
      };
    };
  };
}

/** Builds the callback document for a result; outcomes go in only when there are some. */
export function callbackDocument(result: TaskResult): CallbackDocument {
  const attributes: CallbackDocument['data']['attributes'] = { status: result.status };
  if (result.message !== undefined) attributes.message = result.message;
  if (result.url !== undefined) attributes.url = result.url;
  const doc: CallbackDocument = { data: { type: 'task-results', attributes } };
  if (result.outcomes !== undefined && result.outcomes.length > 0) {
    doc.data.relationships = {
      outcomes: {
        data: result.outcomes.map((o) => ({
          type: 'task-result-outcomes' as const,
          attributes: {
            'outcome-id': o.id,
            description: o.description,
            ...(o.tags === undefined ? {} : { tags: o.tags }),
            ...(o.body === undefined ? {} : { body: o.body }),
            ...(o.url === undefined ? {} : { url: o.url }),
          },
        })),
      },
    };
  }
  return doc;
}
