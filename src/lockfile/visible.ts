/**
 * Text read from a lock file (a provider's address) as it may be printed: every control character (C0, DEL and
 * C1: `\p{Cc}`) written as its JSON escape, `\u001b`, so that an address cannot change a terminal's title, clear
 * its screen, or break a line of the output. A backslash is left as it is, so `\u001b` typed in an address reads
 * the same as the character; the `--json` document keeps the exact value.
 */

/** `text` with each control character written `\uXXXX`. */
export function visible(text: string): string {
  return text.replace(/\p{Cc}/gu, escapeChar);
}

/** One UTF-16 code unit written `\uXXXX`. */
export function escapeChar(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
