// The run task request the platform sends, as documented (HCP Terraform API docs, "Run Tasks Integration",
// "Run Task Request" sample for post_plan; the same sample as test/runtask/documented-payloads.ts), with its
// URLs pointed at the local receiver and a task result id of its own per request.
import { createHmac } from 'node:crypto';

/** API-REF, "Run Task Request" sample (post_plan), field order kept. */
export const POST_PLAN_REQUEST = {
  payload_version: 1,
  stage: 'post_plan',
  access_token: '4QEuyyxug1f2rw.atlasv1.iDyxqhXGVZ0ykes53YdQyHyYtFOrdAWNBxcVUgWvzb64NFHjcquu8gJMEdUwoSLRu4Q',
  capabilities: { outcomes: true },
  configuration_version_download_url:
    'https://app.terraform.io/api/v2/configuration-versions/cv-ntv3HbhJqvFzamy7/download',
  configuration_version_id: 'cv-ntv3HbhJqvFzamy7',
  is_speculative: false,
  organization_name: 'hashicorp',
  plan_json_api_url: 'https://app.terraform.io/api/v2/plans/plan-6AFmRJW1PFJ7qbAh/json-output',
  run_app_url: 'https://app.terraform.io/app/hashicorp/my-workspace/runs/run-i3Df5to9ELvibKpQ',
  run_created_at: '2021-09-02T14:47:13.036Z',
  run_created_by: 'username',
  run_id: 'run-i3Df5to9ELvibKpQ',
  run_message: 'Triggered via UI',
  task_result_callback_url:
    'https://app.terraform.io/api/v2/task-results/5ea8d46c-2ceb-42cd-83f2-82e54697bddd/callback',
  task_result_enforcement_level: 'mandatory',
  task_result_id: 'taskrs-2nH5dncYoXaMVQmJ',
  vcs_branch: 'main',
  vcs_commit_url:
    'https://github.com/hashicorp/terraform-random/commit/7d8fb2a2d601edebdb7a59ad2088a96673637d22',
  vcs_commit_hash: '7d8fb2a2d601edebdb7a59ad2088a96673637d22',
  vcs_pull_request_url: null,
  vcs_repo_url: 'https://github.com/hashicorp/terraform-random',
  workspace_app_url: 'https://app.terraform.io/app/hashicorp/my-workspace',
  workspace_id: 'ws-ck4G5bb1Yei5szRh',
  workspace_name: 'tfr_github_0',
  workspace_working_directory: '/terraform',
};

/** The n-th request body: the documented sample with its own task result, callback and plan URLs. */
export function requestBody(n, platformUrl) {
  const id = `taskrs-bench${String(n).padStart(7, '0')}`;
  return JSON.stringify({
    ...POST_PLAN_REQUEST,
    plan_json_api_url: `${platformUrl}/api/v2/plans/plan-${id}/json-output`,
    task_result_callback_url: `${platformUrl}/api/v2/task-results/${id}/callback`,
    task_result_id: id,
  });
}

/** The platform's signature header value: lowercase hex HMAC-SHA512 of the raw body. */
export function sign(key, body) {
  return createHmac('sha512', Buffer.from(key, 'utf8')).update(body).digest('hex');
}
