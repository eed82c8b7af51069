/**
 * A file of the origin's (a zip, SHA256SUMS, its signature) whose download failed, as a failure of the version it
 * belongs to: a link that refused (404…) or gave no answer (a reset, a timeout) is exit 4; a file past its cap, or
 * a link that redirects to one that is not http or https (`file:`, `data:`, a UNIX socket), is exit 3, since what
 * the origin serves cannot be what it says it is. The message names the version, the file and
 * the host of the link (never the link itself, which may be signed).
 */
import { ApiError, VerificationError, type ProviderError } from '../errors.js';
import { NETWORK_CODE } from '../net/retryPolicy.js';
import { DownloadError, NotWebLinkError, TooSlowError } from '../registry/downloads.js';
import { formatCap } from '../release/smallFile.js';

/** What one download of a version is, for its failure's message. */
export interface OriginFile {
  /** `acme/example 1.2.0`. */
  label: string;
  /** The file's name, or what it is (`SHA256SUMS`). */
  file: string;
  link: string;
  /** Its cap in bytes, named when it is passed. */
  limit: number;
}

/** Runs one download; a DownloadError it throws becomes the version's failure (see above). */
export async function fromOrigin<T>(file: OriginFile, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof DownloadError) throw downloadFailure(error, file);
    throw error;
  }
}

function downloadFailure(error: DownloadError, file: OriginFile): ProviderError {
  const host = new URL(file.link).host;
  const details = { file: file.file, host, reason: error.reason };
  if (error instanceof NotWebLinkError) {
    return new VerificationError(
      `${file.label}: the link of ${file.file} on ${host} redirects to ${error.target}; only http and https links are fetched`,
      {
        hint: 'The origin serves a link Terraform could not use either; nothing of the version was fetched from it or written.',
        details: { ...details, target: error.target },
      },
    );
  }
  if (error.reason === 'too large') {
    return new VerificationError(
      `${file.label}: ${file.file} from ${host} is larger than ${formatCap(file.limit)}, more than such a file can be`,
      {
        hint: 'The origin serves something else than a release file; nothing of the version was written. Report it to the origin.',
        details: { ...details, limit: file.limit },
      },
    );
  }
  const what =
    error.status === undefined
      ? `downloading ${file.file} from ${host} failed: ${error.reason}`
      : `the link of ${file.file} on ${host} answered ${error.reason}`;
  return new ApiError(`${file.label}: ${what}`, {
    status: error.status ?? 0,
    hint: error.status === undefined ? noAnswerHint(error, host) : answerHint(error.status),
    details,
  });
}

const AGAIN_LATER = 'run the same command again later: it mirrors what is missing.';

function answerHint(status: number): string {
  return status === 408 || status === 429 || status >= 500
    ? `The origin is busy or failing (after retries); ${AGAIN_LATER}`
    : 'The origin lists a file it does not serve; nothing of the version was written. Try again later, or report it to the origin.';
}

/** What to do about a download that got no (whole) answer: only the network's passing trouble is "later". */
function noAnswerHint(error: DownloadError, host: string): string {
  if (error.reason === 'bad range') {
    return `The origin answered a range request with another range than asked: its answers cannot be relied on now; ${AGAIN_LATER}`;
  }
  if (error instanceof TooSlowError) {
    return `The origin sent too slowly to finish (under 1 KiB in a window of PROVIDER_HTTP_TIMEOUT, after retries); ${AGAIN_LATER}`;
  }
  const network = error.network;
  if (network !== undefined && network.kind !== 'network') {
    const met =
      network.kind === 'plain-http' ? 'answered in plain HTTP, not TLS' : 'failed the TLS handshake';
    return `The link points to https://${host}, which ${met}: another try will not help; report it to the origin.`;
  }
  if (network !== undefined && NETWORK_CODE.test(network.reason.split(':')[0]!)) {
    return `The origin did not answer, or stopped sending (after retries); ${AGAIN_LATER}`;
  }
  return `The download failed on this side rather than in the origin's answer (${error.reason}); fix that, then run the same command again: it mirrors what is missing.`;
}
