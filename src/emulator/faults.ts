/**
 * Fault rules for rehearsing bad days: match a request by method and path, then answer with a status, reset
 * the connection, or delay — a number of times, after skipping some, or with a (seeded) probability.
 * `after: true` lets the request take effect first and then loses or replaces its answer. `wrongHash` alters
 * what is served instead: the consumer download response's `packages` gives a wrong lock hash; `withoutKeys` makes
 * it serve no signing key (`"gpg_public_keys": null`, as some public registries do). `injectFault` is
 * the emulator's step that applies them.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { UsageError } from '../errors.js';
import type { Exchange, Step } from './exchange.js';
import { HttpProblem, sendProblem } from './http.js';

/** One rule, as written in a `--faults` file. */
export interface FaultRule {
  /** HTTP method, or absent/`*` for any. */
  method?: string;
  /** Path glob (`*` within a segment, `**` across segments) or a regular expression starting with `^`. */
  path?: string;
  /** Answer with this status and a JSON:API error body. */
  status?: number;
  /** With `status`: a `Retry-After` header, in seconds. */
  retryAfter?: number;
  /** With `status`: the error's `detail`, the server's own words (how a client shows them is rehearsed). */
  detail?: string;
  /** Destroy the connection without an answer. */
  reset?: boolean;
  /** Wait this many milliseconds first (then answer normally unless status/reset is set too). */
  delayMs?: number;
  /** Apply the status/reset to the answer after the request took effect (a lost answer). */
  after?: boolean;
  /** Fire at most this many times (default: every match). */
  times?: number;
  /** Let this many matching requests through before firing. */
  skip?: number;
  /** Fire with this probability (0..1), drawn from the seeded generator. */
  probability?: number;
  /**
   * Serve a wrong lock hash of this scheme in the `packages` of a consumer download response (`download/:os/:arch`
   * with `--package-hashes`): a well-formed hash of another package. On other requests it does nothing.
   */
  wrongHash?: 'h1' | 'zh';
  /** With `wrongHash`: the `<os>_<arch>` entry to alter (default: the platform the response is for). */
  platform?: string;
  /**
   * Serve the consumer download response (`download/:os/:arch`) with `"gpg_public_keys": null`, as
   * registry.opentofu.org does for some providers; on other requests it does nothing.
   */
  withoutKeys?: boolean;
}

/** A `--faults` file: a list of rules, or `{ "seed": n, "rules": [...] }`. */
export type FaultFile = FaultRule[] | { seed?: number; rules: FaultRule[] };

/** A fault chosen for one request. */
export interface FaultDecision {
  rule: FaultRule;
  index: number;
}

interface ActiveRule {
  rule: FaultRule;
  matcher: RegExp | undefined;
  seen: number;
  fired: number;
}

/** mulberry32: small, fast, deterministic for a seed. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Turns a path glob into a regular expression. */
export function globToRegExp(glob: string): RegExp {
  if (glob.startsWith('^')) return new RegExp(glob);
  const source = glob
    .split('**')
    .map((part) =>
      part
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]*'),
    )
    .join('.*');
  return new RegExp(`^${source}/?$`);
}

/** Checks a rule's fields, naming the rule in the error. */
function validateRule(rule: unknown, where: string): FaultRule {
  if (typeof rule !== 'object' || rule === null || Array.isArray(rule)) {
    throw new UsageError(`${where}: a fault rule must be an object`);
  }
  const r = rule as Record<string, unknown>;
  const known = [
    'method',
    'path',
    'status',
    'retryAfter',
    'detail',
    'reset',
    'delayMs',
    'after',
    'times',
    'skip',
    'probability',
    'wrongHash',
    'platform',
    'withoutKeys',
  ];
  for (const key of Object.keys(r)) {
    if (!known.includes(key)) {
      throw new UsageError(`${where}: unknown field "${key}"`, {
        hint: `Known fields: ${known.join(', ')}.`,
      });
    }
  }
  const num = (key: string, min: number, max: number) => {
    const v = r[key];
    if (v !== undefined && (typeof v !== 'number' || !(v >= min && v <= max))) {
      throw new UsageError(`${where}: "${key}" must be a number between ${min} and ${max}`);
    }
  };
  num('status', 100, 599);
  num('retryAfter', 0, 86400);
  num('delayMs', 0, 3_600_000);
  num('times', 0, Number.MAX_SAFE_INTEGER);
  num('skip', 0, Number.MAX_SAFE_INTEGER);
  num('probability', 0, 1);
  for (const key of ['method', 'path', 'detail']) {
    if (r[key] !== undefined && typeof r[key] !== 'string')
      throw new UsageError(`${where}: "${key}" must be a string`);
  }
  if (typeof r.path === 'string' && r.path.startsWith('^')) {
    try {
      new RegExp(r.path);
    } catch (error) {
      throw new UsageError(`${where}: "path" is not a valid regular expression: ${(error as Error).message}`);
    }
  }
  if (r.wrongHash !== undefined && r.wrongHash !== 'h1' && r.wrongHash !== 'zh') {
    throw new UsageError(`${where}: "wrongHash" must be "h1" or "zh"`);
  }
  if (r.platform !== undefined) {
    if (r.wrongHash === undefined) throw new UsageError(`${where}: "platform" goes with "wrongHash"`);
    if (typeof r.platform !== 'string' || !/^[a-z0-9]+_[a-z0-9]+$/.test(r.platform)) {
      throw new UsageError(`${where}: "platform" must be <os>_<arch>, e.g. linux_amd64`);
    }
  }
  if (r.withoutKeys !== undefined && r.withoutKeys !== true) {
    throw new UsageError(`${where}: "withoutKeys" must be true`);
  }
  const acts = r.status !== undefined || r.reset === true || r.delayMs !== undefined;
  if (!acts && r.wrongHash === undefined && r.withoutKeys === undefined) {
    throw new UsageError(`${where}: the rule does nothing`, {
      hint: 'Give "status", "reset": true, "delayMs", "wrongHash" or "withoutKeys": true.',
    });
  }
  return r;
}

/** Parses the contents of a `--faults` file; `source` names it in errors. */
export function parseFaultFile(text: string, source: string): { seed: number; rules: FaultRule[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`, {
      hint: 'A faults file is a JSON array of rules, or {"seed": 1, "rules": [...]}.',
    });
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(list)) {
    throw new UsageError(`${source}: expected an array of rules or an object with "rules"`);
  }
  const seedValue = Array.isArray(parsed) ? undefined : (parsed as { seed?: unknown }).seed;
  if (seedValue !== undefined && typeof seedValue !== 'number')
    throw new UsageError(`${source}: "seed" must be a number`);
  return { seed: seedValue ?? 1, rules: list.map((r, i) => validateRule(r, `${source}: rule ${i + 1}`)) };
}

/** The live set of rules of one emulator; tests add and clear rules in-process. */
export class FaultEngine {
  private rules: ActiveRule[] = [];
  private random: () => number;

  constructor(rules: FaultRule[] = [], seed = 1) {
    this.random = seededRandom(seed);
    for (const rule of rules) this.add(rule);
  }

  /** Adds a rule (validated). */
  add(rule: FaultRule): void {
    const checked = validateRule(rule, `fault rule ${this.rules.length + 1}`);
    this.rules.push({
      rule: checked,
      matcher: checked.path === undefined ? undefined : globToRegExp(checked.path),
      seen: 0,
      fired: 0,
    });
  }

  /** Removes every rule and restarts the generator. */
  clear(seed = 1): void {
    this.rules = [];
    this.random = seededRandom(seed);
  }

  /** How many times each rule fired, in order. */
  get fired(): number[] {
    return this.rules.map((r) => r.fired);
  }

  /** The first rule that fires for this request, if any (counting it). */
  decide(method: string, path: string): FaultDecision | undefined {
    for (const [index, active] of this.rules.entries()) {
      const { rule } = active;
      if (rule.method !== undefined && rule.method !== '*' && rule.method.toUpperCase() !== method) continue;
      if (active.matcher && !active.matcher.test(path)) continue;
      active.seen += 1;
      if (active.seen <= (rule.skip ?? 0)) continue;
      if (rule.times !== undefined && active.fired >= rule.times) continue;
      if (rule.probability !== undefined && this.random() >= rule.probability) continue;
      active.fired += 1;
      return { rule, index };
    }
    return undefined;
  }
}

/**
 * Step: the first rule that fires for the request, if any, named in the request log. Its delay is waited; then
 * the connection is reset or the fault's status answered instead of the request, or, with `after`, the request
 * is handled and its answer lost (`loseAnswer`).
 */
export function injectFault(engine: FaultEngine): Step {
  return async (exchange) => {
    const { req, res, ctx } = exchange;
    const decision = engine.decide(ctx.method, ctx.path);
    if (!decision) return 'next';
    const { rule } = decision;
    exchange.facts.fault = `rule ${decision.index + 1}: ${describeRule(rule)}`;
    if (rule.wrongHash) ctx.wrongHash = { scheme: rule.wrongHash, platform: rule.platform };
    if (rule.withoutKeys) ctx.withoutKeys = true;
    if (rule.delayMs) await sleep(rule.delayMs);
    if (rule.after) {
      if (rule.reset || rule.status !== undefined) loseAnswer(exchange, rule);
      return 'next';
    }
    if (rule.reset) {
      req.socket.destroy();
      return 'answered';
    }
    if (rule.status !== undefined) {
      req.resume();
      sendProblem(res, faultProblem(rule));
      return 'answered';
    }
    return 'next';
  };
}

/** What the request log says a rule did. */
function describeRule(rule: FaultRule): string {
  const what = rule.reset
    ? 'reset'
    : rule.status !== undefined
      ? `status ${rule.status}`
      : rule.wrongHash
        ? `wrong ${rule.wrongHash}: hash${rule.platform ? ` for ${rule.platform}` : ''}`
        : rule.withoutKeys
          ? 'no signing keys'
          : 'delay';
  return `${what}${rule.delayMs ? ` after ${rule.delayMs}ms` : ''}${rule.after ? ' (after handling)' : ''}`;
}

/** The answer of a rule with a status: a JSON:API error, with `Retry-After` when the rule gives one. */
function faultProblem(rule: FaultRule): HttpProblem {
  const status = rule.status ?? 500;
  const headers: Record<string, string> = {};
  if (rule.retryAfter !== undefined) headers['retry-after'] = String(rule.retryAfter);
  return new HttpProblem(
    status,
    [
      {
        status: String(status),
        title: 'injected fault',
        detail: rule.detail ?? 'This answer was injected by a --faults rule.',
      },
    ],
    headers,
  );
}

/**
 * Lets the handler do its work but replaces its answer: the connection is reset, or the fault's status is
 * sent instead (none of the handler's headers kept). This is how a create whose answer was lost is rehearsed.
 */
function loseAnswer(exchange: Exchange, rule: FaultRule): void {
  const { req, res } = exchange;
  res.replaceAnswer(() => {
    if (rule.reset) {
      req.socket.destroy();
      return;
    }
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    sendProblem(res, faultProblem(rule));
  });
}

/** A well-formed hash of the same scheme that is not `hash`: the SHA-256 of it, in the scheme's encoding. */
export function wrongLockHash(hash: string): string {
  const digest = createHash('sha256').update(hash);
  return hash.startsWith('h1:') ? `h1:${digest.digest('base64')}` : `zh:${digest.digest('hex')}`;
}
