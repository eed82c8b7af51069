/** The configuration layer: flags, environment, config file and credentials, resolved in one place. */
export { parseDuration, isDuration, DURATION_FORMS, MAX_DURATION_MS } from './duration.js';
export { parseHostname, type ApiHost } from './hostname.js';
export {
  resolveToken,
  encodeTokenVariable,
  tokenAdvice,
  ACTION_VARIABLE,
  credentialsFilePath,
  type ResolveTokenInput,
  type ResolvedToken,
  type TokenSource,
} from './credentials.js';
// The schema (and zod with it) is loaded only when a configuration file is found: see load.ts.
export type { FileConfig } from './schema.js';
export { loadConfigFile, SEARCH_PLACES, PROJECT_ROOT_MARKERS, type LoadedConfig } from './load.js';
export {
  resolveSettings,
  parseConcurrency,
  DEFAULT_HOSTNAME,
  DEFAULT_CONCURRENCY,
  DEFAULT_WAIT_TIMEOUT_MS,
  type Concurrency,
  type GlobalFlags,
  type Settings,
  type SettingsFlags,
  type SettingSource,
  type ResolveSettingsInput,
} from './resolve.js';
