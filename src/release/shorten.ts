/**
 * Release files are written by someone else's tools: a name, hash or value quoted in an error message may be
 * megabytes long. Messages quote at most a screenful of it, so that one bad line cannot flood a terminal or a
 * CI log (and the `--json` document stays small).
 */

/** `text` unchanged when it is short enough, else its first `max` characters, an ellipsis and the full length. */
export function shorten(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}
