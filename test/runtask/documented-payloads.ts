/**
 * The documented run task payloads, transcribed so that the tests never read anything outside this repository.
 * Each constant names the document it comes from. Sources (HashiCorp `web-unified-docs`, published at
 * developer.hashicorp.com/terraform/cloud-docs/...):
 * - API-REF: `api-docs/run-tasks/run-tasks-integration.mdx` — "Run Task Request" sample and the callback
 *   samples ("Request Body", "Complete Callback Payload Example").
 * - GUIDE: `integrations/run-tasks/index.mdx` — the same request sample with three `project_*` lines.
 * - The pre_plan capture of `gitrgoliveira/tfc-run-task-demo` (`payload.json`, HCP Terraform 2023-06; the
 *   token replaced, structure and field order unchanged).
 * - The verification request: HashiCorp documents only that a "test POST" is sent and must get 200; its
 *   distinguishing values come from `hashicorp/terraform-run-task-scaffolding-go` (`access_token:"test-token"`)
 *   and the community integrators listed in reference/run-tasks.md §1.6.
 * - The signature: GUIDE, "Securing your Run Task" (`echo -n $BODY | openssl dgst -sha512 -hmac "$KEY"`).
 *
 * HashiCorp publishes no per-stage samples: as the API-REF field table says, pre_plan lacks
 * `plan_json_api_url` and the other stages carry it, so pre_apply and post_apply are the post_plan sample with
 * `stage` changed (derived, as marked). Field order is kept: the platform's order is not alphabetical.
 */

/** API-REF, "Run Task Request" sample (post_plan), verbatim. */
export const POST_PLAN_REQUEST = {
  payload_version: 1,
  stage: 'post_plan',
  access_token: '4QEuyyxug1f2rw.atlasv1.iDyxqhXGVZ0ykes53YdQyHyYtFOrdAWNBxcVUgWvzb64NFHjcquu8gJMEdUwoSLRu4Q',
  capabilities: {
    outcomes: true,
  },
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
} as const;

/** GUIDE's copy of the sample: the three `project_*` lines come right after `plan_json_api_url`. */
export const GUIDE_PROJECT_FIELDS = {
  project_id: 'prj-gFVyPJ2q2Aurn5DV',
  project_name: 'Default Project',
  project_app_url: 'https://app.terraform.io/app/hashicorp/projects/DefaultProject',
} as const;

/** Captured pre_plan request (gitrgoliveira/tfc-run-task-demo `payload.json`): no capabilities, no plan URL. */
export const PRE_PLAN_REQUEST = {
  payload_version: 1,
  access_token: '<token>',
  stage: 'pre_plan',
  is_speculative: false,
  task_result_id: 'taskrs-fHQbAro9KUpG6EJy',
  task_result_enforcement_level: 'advisory',
  task_result_callback_url:
    'https://app.terraform.io/api/v2/task-results/a4f3f9e4-9bde-4ebc-9d13-c11e4c79cb32/callback',
  run_app_url: 'https://app.terraform.io/app/hc-ric-demo/hashicat-aws-gitlab/runs/run-Gm1mNXuSgVdxUnvV',
  run_id: 'run-Gm1mNXuSgVdxUnvV',
  run_message: 'Triggered via UI',
  run_created_at: '2023-06-30T16:16:06.014Z',
  run_created_by: 'rgoliveira',
  workspace_id: 'ws-xZtgfY3mDUwiZnSc',
  workspace_name: 'hashicat-aws-gitlab',
  workspace_app_url: 'https://app.terraform.io/app/hc-ric-demo/hashicat-aws-gitlab',
  organization_name: 'hc-ric-demo',
  vcs_repo_url: 'https://gitlab.com/ricardo86/hashicat-aws.git',
  vcs_branch: 'main',
  vcs_pull_request_url: null,
  vcs_commit_url:
    'https://gitlab.com/ricardo86/hashicat-aws/-/commit/15a21a126ca8c200c658880fef069470b60945e4',
  configuration_version_id: 'cv-rDK1tJNA8xQcrEa7',
  configuration_version_download_url:
    'https://app.terraform.io/api/v2/configuration-versions/cv-rDK1tJNA8xQcrEa7/download',
  workspace_working_directory: '',
} as const;

/** Derived from API-REF (see the header): the post_plan sample at pre_apply. */
export const PRE_APPLY_REQUEST = { ...POST_PLAN_REQUEST, stage: 'pre_apply' } as const;

/** Derived from API-REF (see the header): the post_plan sample at post_apply (current docs list the plan URL). */
export const POST_APPLY_REQUEST = { ...POST_PLAN_REQUEST, stage: 'post_apply' } as const;

/**
 * The verification request sent when a run task is created (reference/run-tasks.md §1.6): the body quoted in a
 * community Go integrator's comment — `payload_version` 1, `access_token` "test-token", enforcement "test",
 * a callback URL of the documented form, `test-org` / `test-workspace`, a plan URL.
 */
export const VERIFICATION_REQUEST = {
  payload_version: 1,
  stage: 'test',
  access_token: 'test-token',
  task_result_id: 'taskrs-test',
  task_result_enforcement_level: 'test',
  task_result_callback_url:
    'https://app.terraform.io/api/v2/task-results/00000000-0000-0000-0000-000000000000/callback',
  organization_name: 'test-org',
  workspace_name: 'test-workspace',
  plan_json_api_url: 'https://app.terraform.io/api/v2/plans/plan-test/json-output',
  vcs_repo_url: 'https://github.com/test/test',
} as const;

/** The ms-teams-approval-run-task test's verification body: token and stage only, plus the callback URL. */
export const VERIFICATION_REQUEST_MINIMAL = {
  access_token: 'test-token',
  stage: 'test',
  task_result_callback_url: 'https://app.terraform.io/api/v2/task-results/test/callback',
} as const;

/** API-REF, callback "Request Body" (minimal) sample. */
export const MINIMAL_CALLBACK = {
  data: {
    type: 'task-results',
    attributes: {
      status: 'passed',
      message: '4 passed, 0 skipped, 0 failed',
      url: 'https://external.service.dev/terraform-plan-checker/run-i3Df5to9ELvibKpQ',
    },
  },
} as const;

/** API-REF, "Complete Callback Payload Example", verbatim. */
export const COMPLETE_CALLBACK = {
  data: {
    type: 'task-results',
    attributes: {
      status: 'failed',
      message: '0 passed, 0 skipped, 1 failed',
      url: 'https://external.service.dev/terraform-plan-checker/run-i3Df5to9ELvibKpQ',
    },
    relationships: {
      outcomes: {
        data: [
          {
            type: 'task-result-outcomes',
            attributes: {
              'outcome-id': 'PRTNR-CC-TF-127',
              description: 'ST-2942: S3 Bucket will not enforce MFA login on delete requests',
              tags: {
                Status: [
                  {
                    label: 'Denied',
                    level: 'error',
                  },
                ],
                Severity: [
                  {
                    label: 'High',
                    level: 'error',
                  },
                  {
                    label: 'Recoverable',
                    level: 'info',
                  },
                ],
                'Cost Centre': [
                  {
                    label: 'IT-OPS',
                  },
                ],
              },
              body: '# Resolution for issue ST-2942\n\n## Impact\n\nFollow instructions in the [AWS S3 docs](https://docs.aws.amazon.com/AmazonS3/latest/userguide/MultiFactorAuthenticationDelete.html) to manually configure the MFA setting.\n—-- Payload truncated —--',
              url: 'https://external.service.dev/result/PRTNR-CC-TF-127',
            },
          },
        ],
      },
    },
  },
} as const;

/**
 * A signature vector made with the documented command, for the body `{"payload_version":1,"stage":"post_plan"}`
 * and the key `secret123` (SCAFFOLD's default key): `printf '%s' "$BODY" | openssl dgst -sha512 -hmac secret123`.
 */
export const SIGNATURE_VECTOR = {
  key: 'secret123',
  body: '{"payload_version":1,"stage":"post_plan"}',
  signature:
    'e3bbc37031596117ea3618dcdfa83d263fc65d34c9e8257398159adba132d5a3ea2ef1a313e3a554ef217bc7038489ef23aea811ac075e912fb6f141d774b1bd',
} as const;

/** The documented platform origin in every sample URL; tests point it at their local receiver. */
export const DOCUMENTED_ORIGIN = 'https://app.terraform.io';
