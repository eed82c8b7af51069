/**
 * Fetching the run's plan JSON for a handler: `plan_json_api_url` with the access token, a 307 to the blob link
 * (or 204 while the plan is not ready), the link fetched without the token (download.ts).
 */
import { fetchRunFile, type FetchRunFileOptions, type RunFile } from './download.js';

/** Where the plan is, where it goes, and how hard to try. */
export type FetchPlanOptions = FetchRunFileOptions;

const PLAN_JSON: RunFile = {
  what: 'the plan JSON',
  short: 'the plan',
  thisOne: 'this plan',
  accept: 'application/json',
};

/** Downloads the plan JSON into `file`; resolves with its size in bytes. */
export function fetchPlanJson(options: FetchPlanOptions): Promise<number> {
  return fetchRunFile(PLAN_JSON, options);
}
