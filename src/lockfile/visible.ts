/**
 * Text read from a lock file (a provider's address) as it may be printed: every control character (C0, DEL and
 * C1: `\p{Cc}`) written as its JSON escape, `\u001b`, so that an address cannot change a terminal's title, clear
 * its screen, or break a line of the output. A backslash is left as it is, so `\u001b` typed in an address reads
 * the same as the character; the `--json` document keeps the exact value.
 */
import { escapeChar } from '../ui/output.js';

export { escapeChar };

/** `text` with each control character written `\uXXXX`. */
export function visible(text: string): string {
  return text.replace(/\p{Cc}/gu, escapeChar);
}
