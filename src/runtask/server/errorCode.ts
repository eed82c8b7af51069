/** The code of a failed system call (`ENOENT`, `ENOSPC`…), and errors carrying one, for the journal's messages. */

/** The error's code, or `EUNKNOWN` when it has none. */
export function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
}

/** An error with a code, for failures found without a system call failing (a file removed under the journal). */
export function coded(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
