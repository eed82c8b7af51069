/**
 * What the platform issues for one run task request: ids shaped like the documented ones, an access token
 * shaped like the platform's (`<14>.atlasv1.<67>`), the callback URL (`/api/v2/task-results/<uuid>/callback`),
 * and the URLs of the plan JSON and the configuration version on this platform.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { RunTaskStage } from '../../terraform/runtask/payload.js';
import { newId } from '../state.js';

/** The dummy access token of the verification request (run-tasks.md §1.6). */
export const VERIFICATION_ACCESS_TOKEN = 'test-token';

/** What `runtask send` asks the platform to set up. */
export interface RunTaskSetup {
  stage: RunTaskStage;
  enforcement: 'mandatory' | 'advisory';
  outcomesOffered: boolean;
  organization: string;
  workspace: string;
  /** Served through a 307 for stages that carry `plan_json_api_url`. */
  planJson: Buffer;
  /** Served through a 302 at `configuration_version_download_url`. */
  configurationVersion: Buffer;
}

/** Everything issued for a run task request (or the verification request). */
export interface IssuedTask {
  kind: 'run' | 'verification';
  guid: string;
  taskResultId: string;
  accessToken: string;
  callbackUrl: string;
  stage: RunTaskStage | 'test';
  enforcement: 'mandatory' | 'advisory' | 'test';
  outcomesOffered: boolean;
  organization: string;
  workspace: string;
  workspaceId: string;
  workspaceAppUrl: string;
  runId: string;
  runAppUrl: string;
  runCreatedAt: string;
  planId: string;
  /** Present for post_plan, pre_apply, post_apply (and the verification request). */
  planJsonApiUrl?: string | undefined;
  configurationVersionId: string;
  configurationVersionDownloadUrl: string;
}

/** Stages whose requests carry `plan_json_api_url` (run-tasks.md §1.3, current API-REF). */
export const STAGES_WITH_PLAN: readonly string[] = ['post_plan', 'pre_apply', 'post_apply'];

/** A fresh access token shaped like the platform's. */
export function newAccessToken(): string {
  const part = (n: number): string => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let out = '';
    for (const b of randomBytes(n)) out += alphabet[b % alphabet.length];
    return out;
  };
  return `${part(14)}.atlasv1.${part(67)}`;
}

/** Issues the ids, token and URLs of a task on the platform at `baseUrl`. */
export function issueTask(
  baseUrl: string,
  setup: Pick<RunTaskSetup, 'stage' | 'enforcement' | 'outcomesOffered' | 'organization' | 'workspace'>,
  kind: 'run' | 'verification',
  now: number,
): IssuedTask {
  const guid = randomUUID();
  const runId = newId('run');
  const planId = newId('plan');
  const cvId = newId('cv');
  const verification = kind === 'verification';
  const workspaceAppUrl = `${baseUrl}/app/${setup.organization}/${setup.workspace}`;
  return {
    kind,
    guid,
    taskResultId: newId('taskrs'),
    accessToken: verification ? VERIFICATION_ACCESS_TOKEN : newAccessToken(),
    callbackUrl: `${baseUrl}/api/v2/task-results/${guid}/callback`,
    stage: verification ? 'test' : setup.stage,
    enforcement: verification ? 'test' : setup.enforcement,
    outcomesOffered: setup.outcomesOffered,
    organization: setup.organization,
    workspace: setup.workspace,
    workspaceId: newId('ws'),
    workspaceAppUrl,
    runId,
    runAppUrl: `${workspaceAppUrl}/runs/${runId}`,
    runCreatedAt: new Date(now).toISOString(),
    planId,
    planJsonApiUrl:
      verification || STAGES_WITH_PLAN.includes(setup.stage)
        ? `${baseUrl}/api/v2/plans/${planId}/json-output`
        : undefined,
    configurationVersionId: cvId,
    configurationVersionDownloadUrl: `${baseUrl}/api/v2/configuration-versions/${cvId}/download`,
  };
}
