/**
 * Provider version tags (HCP Terraform, 2026) on the client's side, without I/O: what a tag is, the format
 * rules checked before anything is sent, `key=value` flags, and comparing, sorting and printing tag sets.
 *
 * The version-tags API page gives no format rule beyond "422 when the tag key or value format is incorrect"
 * (hashicorp/web-unified-docs: content/terraform-docs-common/docs/cloud-docs/api-docs/private-registry/
 * providers/version-tags.mdx). The rules here are the registry tagging page's (registry_tagging.mdx in the same
 * folder): a key of at most 128 characters, a value of at most 256, both of letters, digits, spaces and
 * `_.=+-@:`. Decided here, where the docs are silent: ASCII letters and digits only, neither may be empty or
 * begin or end with a space, and on the command line a key cannot hold `=` (the first `=` ends the key).
 */
import { UsageError } from '../errors.js';

/** One tag of a version: the platform allows several values for one key (its own sample has two). */
export interface Tag {
  key: string;
  value: string;
}

/** A `--tag` filter of `versions list`: a key with one value, or a key with any value. */
export interface TagFilter {
  key: string;
  value?: string | undefined;
}

/** Longest key the registry takes (registry_tagging.mdx). */
export const TAG_KEY_MAX = 128;
/** Longest value the registry takes (registry_tagging.mdx). */
export const TAG_VALUE_MAX = 256;

const TAG_TEXT = /^[A-Za-z0-9 _.=+\-@:]+$/;

/** Why `text` is not a key (or value) the registry takes; undefined when it is. */
export function tagTextProblem(text: string, part: 'key' | 'value'): string | undefined {
  const max = part === 'key' ? TAG_KEY_MAX : TAG_VALUE_MAX;
  if (text.length === 0) return `the ${part} is empty`;
  if (text.length > max) return `the ${part} has ${text.length} characters; at most ${max} are allowed`;
  if (!TAG_TEXT.test(text)) {
    const bad = [...new Set([...text].filter((c) => !TAG_TEXT.test(c)))]
      .map((c) => JSON.stringify(c))
      .join(' ');
    return `the ${part} holds ${bad}; only letters, digits, spaces and _ . = + - @ : are allowed`;
  }
  if (text.trim() !== text) return `the ${part} begins or ends with a space`;
  return undefined;
}

/** The rules, for hints. */
const RULES =
  'Give --tag key=value: a key of 1 to 128 and a value of 1 to 256 letters, digits, spaces or _ . = + - @ : (the first = ends the key).';

/** Parses one `--tag key=value`; UsageError (exit 2) naming the tag and what is wrong. */
export function parseTag(text: string): Tag {
  const at = text.indexOf('=');
  if (at < 0) {
    throw new UsageError(`--tag ${JSON.stringify(text)}: expected key=value`, { hint: RULES });
  }
  const tag = { key: text.slice(0, at), value: text.slice(at + 1) };
  const problem = tagTextProblem(tag.key, 'key') ?? tagTextProblem(tag.value, 'value');
  if (problem !== undefined) {
    throw new UsageError(`--tag ${JSON.stringify(text)}: ${problem}`, {
      hint: RULES,
      details: { tag: text },
    });
  }
  return tag;
}

/** Every `--tag` of publish, parsed, without repeats, sorted; empty when none was given. */
export function parseTags(texts: readonly string[] | undefined): Tag[] {
  return uniqueTags((texts ?? []).map(parseTag));
}

/** Parses a `versions list --tag`: `key=value`, or `key` alone for any value of that key. */
export function parseTagFilter(text: string): TagFilter {
  if (!text.includes('=')) {
    const problem = tagTextProblem(text, 'key');
    if (problem !== undefined) {
      throw new UsageError(`--tag ${JSON.stringify(text)}: ${problem}`, {
        hint: 'Give --tag key=value, or --tag key for any value of that key.',
      });
    }
    return { key: text };
  }
  return parseTag(text);
}

/** Tags sorted by key, then value (the order every output uses). */
export function sortTags<T extends Tag>(tags: readonly T[]): T[] {
  return [...tags].sort((a, b) => compare(a.key, b.key) || compare(a.value, b.value));
}

/** The tags without repeats of the same key and value, sorted. */
export function uniqueTags(tags: readonly Tag[]): Tag[] {
  const seen = new Map<string, Tag>();
  for (const t of tags) seen.set(JSON.stringify([t.key, t.value]), { key: t.key, value: t.value });
  return sortTags([...seen.values()]);
}

/** True when both hold the same tags (order and repeats aside). */
export function sameTags(a: readonly Tag[], b: readonly Tag[]): boolean {
  const x = uniqueTags(a);
  const y = uniqueTags(b);
  return x.length === y.length && x.every((t, i) => t.key === y[i]!.key && t.value === y[i]!.value);
}

/** True when the tags match one of the filters (the platform's OR across indexes, key AND value within one). */
export function matchesTagFilters(tags: readonly Tag[], filters: readonly TagFilter[]): boolean {
  if (filters.length === 0) return true;
  return filters.some((f) =>
    tags.some((t) => t.key === f.key && (f.value === undefined || t.value === f.value)),
  );
}

/** `environment=dev, team=core`, or `-` when there are none. */
export function formatTags(tags: readonly Tag[], separator = ', '): string {
  return tags.length === 0
    ? '-'
    : sortTags(tags)
        .map((t) => `${t.key}=${t.value}`)
        .join(separator);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
