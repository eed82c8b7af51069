/** Wording of the consumer check's failures, and the small concurrency helper its downloads use. */
import { ApiError } from '../errors.js';
import type { DownloadError } from '../registry/downloads.js';
import { networkHint } from '../net/networkFailure.js';
import type { ConsumerProblem } from './checksums.js';

/** The VerificationError message: one header line, and each problem with Terraform's words beneath (`lines`). */
export function describeProblems(
  problems: ConsumerProblem[],
  label: string,
  hostname: string,
): { message: string; lines: string[] } {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  const lines: string[] = [];
  for (const p of problems) {
    lines.push(`  ${p.subject}: ${p.message}`);
    if (p.terraform !== null) lines.push(`    terraform init says: ${p.terraform}`);
  }
  return { message: `terraform init would refuse ${label} as ${hostname} serves it (${count}):`, lines };
}

/**
 * A failed download as a problem. A link that answers an HTTP error is something consumers would meet too
 * (Terraform's words for the checksum files are kept); a network failure is ours alone, and a link that kept
 * answering 408/429/5xx says the registry is busy, not that the version is broken: both are thrown as an
 * ApiError (exit 4) rather than reported as a verification failure whose hint is to delete the version.
 */
export function downloadProblem(
  error: DownloadError,
  subject: string,
  what: string,
  kind: 'checksums' | 'signature' | 'archive',
  link?: string,
): ConsumerProblem {
  if (error.status === undefined && error.reason !== 'no link' && error.reason !== 'too large') {
    const otherwise = 'Check the network (and --hostname), then run the same command again.';
    throw new ApiError(`Downloading ${what} failed: ${error.reason}`, {
      status: 0,
      hint:
        error.network === undefined || link === undefined
          ? otherwise
          : networkHint(error.network, hostOrLink(link), 'link', otherwise),
      details: { file: what, reason: error.reason },
    });
  }
  if (error.status !== undefined && (error.status === 408 || error.status === 429 || error.status >= 500)) {
    throw new ApiError(`Downloading ${what} failed: ${error.reason} (after retries)`, {
      status: error.status,
      hint: 'The registry is busy or failing for the moment; what is published stays. Run the same command again later.',
      details: { file: what, reason: error.reason },
    });
  }
  const host = link === undefined ? 'the registry' : hostOrLink(link);
  const served = `${error.reason} returned from ${host}`;
  const terraform =
    error.reason === 'no link'
      ? null
      : kind === 'checksums'
        ? `failed to retrieve authentication checksums for provider: ${served}`
        : kind === 'signature'
          ? `failed to retrieve cryptographic signature for provider: ${served}`
          : null;
  return {
    subject,
    message:
      error.reason === 'no link'
        ? `the registry serves no download link for ${what}`
        : `${error.message}; consumers cannot download it`,
    terraform,
    hint: 'Run the same provider publish command again to upload what is missing, or delete the version (provider delete <version>) and publish it again.',
  };
}

/** A link's host, or "the registry's link" when it is no URL (it is then a problem of its own, never a crash). */
function hostOrLink(link: string): string {
  try {
    return new URL(link).host;
  } catch {
    return "the registry's link";
  }
}
