/** The error of a download, shared by the downloader (./downloads.ts) and its range requests (./ranges.ts). */
import type { NetworkFailure } from '../net/networkFailure.js';

/** Why a download failed: an HTTP status the link answered, or a network problem (`status` undefined). */
export class DownloadError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly reason: string,
    /** For a network problem: what kind (a link to a server that does not speak TLS is no passing trouble). */
    readonly network?: NetworkFailure,
  ) {
    super(message);
  }
}
