/**
 * Durations given on the command line, in the environment or in the config file (`--wait-timeout 10m`).
 * The grammar is a small subset of Go's time.ParseDuration, which Terraform users already know.
 */
import { UsageError } from '../errors.js';

/** The longest delay `setTimeout` honours (2^31-1 ms, about 596 h); anything longer would fire at once. */
export const MAX_DURATION_MS = 2_147_483_647;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const NUMBER = String.raw`\d+(?:\.\d+)?`;
// `ms` must come before `m`, or "500ms" would read as 500 minutes followed by garbage.
const UNIT = 'ms|h|m|s';
const BARE_SECONDS = new RegExp(`^${NUMBER}$`);
const WITH_UNITS = new RegExp(`^(?:${NUMBER}(?:${UNIT}))+$`);
const COMPONENT = new RegExp(`(${NUMBER})(${UNIT})`, 'g');

/** The accepted forms, shown in every duration error. */
export const DURATION_FORMS =
  'Use a number of seconds (90, 1.5) or a duration with units ms, s, m, h, such as 500ms, 30s, 10m, 1h or 1h30m.';

/** Parses `500ms`, `30s`, `10m`, `1h`, `1h30m` or bare seconds (`90`, `1.5`) into milliseconds. */
export function parseDuration(text: string, what: string): number {
  const trimmed = text.trim();
  let ms: number;
  if (BARE_SECONDS.test(trimmed)) {
    ms = Number(trimmed) * 1_000;
  } else if (WITH_UNITS.test(trimmed)) {
    ms = 0;
    for (const [, amount, unit] of trimmed.matchAll(COMPONENT)) {
      ms += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
    }
  } else {
    throw new UsageError(`${what} is not a valid duration: "${text}"`, { hint: DURATION_FORMS });
  }
  // Fractions of a millisecond cannot be waited for; round rather than reject "0.0015s".
  ms = Math.round(ms);
  if (!(ms > 0)) {
    throw new UsageError(`${what} must be longer than zero: "${text}"`, { hint: DURATION_FORMS });
  }
  if (ms > MAX_DURATION_MS) {
    throw new UsageError(`${what} is too long: "${text}" (the longest is 596h)`, { hint: DURATION_FORMS });
  }
  return ms;
}

/** True when `parseDuration` would accept the value (a string, or a number of seconds). */
export function isDuration(value: string | number): boolean {
  try {
    parseDuration(String(value), 'duration');
    return true;
  } catch {
    return false;
  }
}

const AGE = /^(\d+)(d|h|m)$/;
const MAX_AGE_MS = 36_500 * 86_400_000;
const AGE_UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000 };

/**
 * An age, as cooldowns are written (`7d`, `36h`, `90m`): a whole number of days, hours or minutes, in ms. Not a
 * wait: it may be longer than `parseDuration`'s longest.
 */
export function parseAge(text: string, what: string): number {
  const match = AGE.exec(text.trim());
  if (match === null || Number(match[1]) === 0) {
    throw new UsageError(`${what} is not an age: "${text}"`, {
      hint: 'Write a whole number of days, hours or minutes: 7d, 36h, 90m.',
    });
  }
  const ms = Number(match[1]) * AGE_UNIT_MS[match[2]!]!;
  if (ms > MAX_AGE_MS) {
    throw new UsageError(`${what} is too long: "${text}" (the longest is 36500d, a hundred years)`, {
      hint: 'Write a whole number of days, hours or minutes: 7d, 36h, 90m.',
    });
  }
  return ms;
}
