/**
 * Fetching the run's configuration version for a handler: `configuration_version_download_url` with the access
 * token, a 302 to the blob link serving the `.tar.gz`, the link fetched without the token (download.ts), and the
 * archive bounded in size (50 MiB by default: the configuration of one workspace, not its modules' caches).
 */
import { fetchRunFile, type FetchRunFileOptions } from './download.js';

/** The largest configuration version downloaded by default, in bytes. */
export const DEFAULT_CONFIGURATION_DOWNLOAD_LIMIT = 50 * 1024 * 1024;

/** Where the configuration version is, where its archive goes, how hard to try, and how large it may be. */
export interface FetchConfigurationOptions extends FetchRunFileOptions {
  maxBytes?: number;
}

/** Downloads the configuration version's `.tar.gz` into `file`; resolves with its size in bytes. */
export function fetchConfigurationVersion(options: FetchConfigurationOptions): Promise<number> {
  return fetchRunFile(
    {
      what: 'the configuration version',
      short: 'the configuration version',
      thisOne: 'this configuration version',
      accept: 'application/octet-stream',
      maxBytes: options.maxBytes ?? DEFAULT_CONFIGURATION_DOWNLOAD_LIMIT,
    },
    options,
  );
}
