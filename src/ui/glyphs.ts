/**
 * The one set of marks every command draws: ora's spinners end with these too (not its own ✔/✖), so a
 * terminal, a CI log and a pasted transcript show one voice. Warnings and errors are words (`warning:`,
 * `error:`), which read and grep the same everywhere.
 */
import type { ChalkInstance } from 'chalk';

/** The marks themselves, uncoloured. */
export const GLYPHS = { success: '✓', failure: '✗' } as const;

/** The success mark, green when colour is on. */
export function successMark(color: ChalkInstance): string {
  return color.green(GLYPHS.success);
}

/** The failure mark, red when colour is on. */
export function failureMark(color: ChalkInstance): string {
  return color.red(GLYPHS.failure);
}
