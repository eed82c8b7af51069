/**
 * Fitting a checked result into the documented limits (run-tasks.md §4.4) instead of losing the callback to
 * a 422: `runtask serve` trims what a handler printed, and says so at the end of the message.
 */
import { RESULT_LIMITS, codePoints, type Outcome, type OutcomeTag, type TaskResult } from './result.js';

/** A trimmed result and what was cut, one phrase per kind of cut. */
export interface TrimmedTaskResult {
  result: TaskResult;
  notes: string[];
}

const BODY_MARKER = '\n\n… (truncated to fit the run task limits)';

/**
 * The first `max` code points of a text (never splits a surrogate pair), in time of `max`, not of the text: a
 * text of megabytes cut to a thousand characters is not read to its end, and the result is one slice of it.
 */
export function cutText(text: string, max: number): string {
  // A text has no more code points than UTF-16 units.
  if (text.length <= max) return text;
  let at = 0;
  for (let kept = 0; kept < max && at < text.length; kept++) at += text.codePointAt(at)! > 0xffff ? 2 : 1;
  return text.slice(0, at);
}

/** Counts cuts by kind so the note says "3 outcome bodies" rather than listing each one. */
class Cuts {
  private readonly counts = new Map<string, number>();

  add(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }

  notes(): string[] {
    return [...this.counts].map(([kind, n]) => (n > 1 ? `${kind} (${n})` : kind));
  }
}

function fit(text: string, max: number, kind: string, cuts: Cuts): string {
  if (codePoints(text) <= max) return text;
  cuts.add(kind);
  return cutText(text, max);
}

function trimTags(tags: Record<string, OutcomeTag[]>, cuts: Cuts): Record<string, OutcomeTag[]> {
  const entries = Object.entries(tags);
  if (entries.length > RESULT_LIMITS.tagKeys)
    cuts.add(`tags beyond ${RESULT_LIMITS.tagKeys} per outcome dropped`);
  const out: Record<string, OutcomeTag[]> = {};
  for (const [key, labels] of entries.slice(0, RESULT_LIMITS.tagKeys)) {
    if (labels.length > RESULT_LIMITS.labelsPerTag)
      cuts.add(`labels beyond ${RESULT_LIMITS.labelsPerTag} per tag dropped`);
    out[key] = labels.slice(0, RESULT_LIMITS.labelsPerTag).map((tag) => ({
      ...tag,
      label: fit(tag.label, RESULT_LIMITS.label, `tag labels cut to ${RESULT_LIMITS.label} characters`, cuts),
    }));
  }
  return out;
}

function trimOutcome(outcome: Outcome, cuts: Cuts): Outcome {
  const out: Outcome = {
    id: fit(
      outcome.id,
      RESULT_LIMITS.outcomeId,
      `outcome ids cut to ${RESULT_LIMITS.outcomeId} characters`,
      cuts,
    ),
    description: fit(
      outcome.description,
      RESULT_LIMITS.description,
      `outcome descriptions cut to ${RESULT_LIMITS.description} characters`,
      cuts,
    ),
  };
  if (outcome.body !== undefined) {
    if (codePoints(outcome.body) > RESULT_LIMITS.body) {
      cuts.add(`outcome bodies cut to ${RESULT_LIMITS.body} characters`);
      out.body = cutText(outcome.body, RESULT_LIMITS.body - codePoints(BODY_MARKER)) + BODY_MARKER;
    } else out.body = outcome.body;
  }
  if (outcome.url !== undefined) {
    if (codePoints(outcome.url) > RESULT_LIMITS.url)
      cuts.add(`outcome URLs longer than ${RESULT_LIMITS.url} characters dropped`);
    else out.url = outcome.url;
  }
  if (outcome.tags !== undefined) out.tags = trimTags(outcome.tags, cuts);
  return out;
}

/** Trims a checked result to the documented limits; when anything was cut, the message ends with a note. */
export function trimTaskResult(result: TaskResult): TrimmedTaskResult {
  const cuts = new Cuts();
  const out: TaskResult = { status: result.status };
  if (result.url !== undefined) {
    if (codePoints(result.url) > RESULT_LIMITS.url)
      cuts.add(`result URL longer than ${RESULT_LIMITS.url} characters dropped`);
    else out.url = result.url;
  }
  if (result.outcomes !== undefined) {
    const kept = result.outcomes.slice(0, RESULT_LIMITS.outcomes);
    if (result.outcomes.length > RESULT_LIMITS.outcomes)
      cuts.add(
        `${result.outcomes.length - RESULT_LIMITS.outcomes} outcomes beyond the first ${RESULT_LIMITS.outcomes} dropped`,
      );
    out.outcomes = kept.map((o) => trimOutcome(o, cuts));
  }
  const notes = cuts.notes();
  const message = result.message ?? '';
  if (notes.length === 0 && codePoints(message) <= RESULT_LIMITS.message) {
    if (result.message !== undefined) out.message = result.message;
    return { result: out, notes };
  }
  if (codePoints(message) > RESULT_LIMITS.message)
    notes.unshift(`message cut to fit ${RESULT_LIMITS.message} characters`);
  const note = cutText(`[trimmed to the run task limits: ${notes.join('; ')}]`, RESULT_LIMITS.message);
  const room = RESULT_LIMITS.message - codePoints(note) - 1;
  out.message = room > 0 && message !== '' ? `${cutText(message, room)} ${note}` : note;
  return { result: out, notes };
}
