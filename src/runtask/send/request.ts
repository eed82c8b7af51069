/**
 * The run task request as the platform builds it (run-tasks.md §1.3/§1.4): every documented field, in the
 * order of the documented sample (which is not alphabetical); `plan_json_api_url` only for the stages that
 * carry it. The verification request has the same layout with the dummy values integrators look for: the
 * token `test-token`, and `test` as the stage and the enforcement level (run-tasks.md §1.6).
 */
import { createHash } from 'node:crypto';
import type { IssuedTask } from '../../emulator/runtask/issue.js';
import { PAYLOAD_VERSION, type RunTaskRequest } from '../../terraform/runtask/payload.js';

/** The User-Agent the platform sends (run-tasks.md §1.2). */
export const PLATFORM_USER_AGENT = 'TFC/1.0 (+https://app.terraform.io; TFC)';

/** Builds the request body for an issued task, field by field in the platform's order. */
export function buildRunTaskRequest(issued: IssuedTask): RunTaskRequest {
  // A stable, made-up commit for the made-up repository: the VCS fields are present, as in the sample.
  const commit = createHash('sha1').update(issued.runId).digest('hex');
  const repo = `https://github.com/${issued.organization}/${issued.workspace}`;
  const request: RunTaskRequest = {
    payload_version: PAYLOAD_VERSION,
    stage: issued.stage,
    access_token: issued.accessToken,
    capabilities: { outcomes: issued.outcomesOffered },
    configuration_version_download_url: issued.configurationVersionDownloadUrl,
    configuration_version_id: issued.configurationVersionId,
    is_speculative: false,
    organization_name: issued.organization,
  };
  if (issued.planJsonApiUrl !== undefined) request.plan_json_api_url = issued.planJsonApiUrl;
  Object.assign(request, {
    run_app_url: issued.runAppUrl,
    run_created_at: issued.runCreatedAt,
    run_created_by: 'runtask-send',
    run_id: issued.runId,
    run_message:
      issued.kind === 'verification' ? 'Run task verification' : 'Triggered via provider runtask send',
    task_result_callback_url: issued.callbackUrl,
    task_result_enforcement_level: issued.enforcement,
    task_result_id: issued.taskResultId,
    vcs_branch: 'main',
    vcs_commit_url: `${repo}/commit/${commit}`,
    vcs_commit_hash: commit,
    vcs_pull_request_url: null,
    vcs_repo_url: repo,
    workspace_app_url: issued.workspaceAppUrl,
    workspace_id: issued.workspaceId,
    workspace_name: issued.workspace,
    workspace_working_directory: '',
  } satisfies RunTaskRequest);
  return request;
}

/** The exact bytes sent (compact JSON: the platform's serialization is undocumented; the bytes are signed). */
export function requestBytes(request: RunTaskRequest): Buffer {
  return Buffer.from(JSON.stringify(request), 'utf8');
}
