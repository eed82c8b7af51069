/** The failures a read of a release file answers with (a `DigestReply` that is not ok), as errors. */
import type { DigestReply } from './digest.js';

/** A read failure of one file, with the file's path and the system error code. */
export class FileReadError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** An entry of a planned zip whose content cannot be read (bad deflate data, wrong size or CRC-32). */
export class EntryReadError extends Error {
  constructor(
    readonly path: string,
    readonly entry: string,
    message: string,
  ) {
    super(message);
  }
}

/** The error a failed read answered with. */
export function replyError(reply: Extract<DigestReply, { ok: false }>): Error {
  return reply.entry === undefined
    ? new FileReadError(reply.path, reply.code, reply.message)
    : new EntryReadError(reply.path, reply.entry, reply.message);
}
