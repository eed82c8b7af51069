/**
 * Request-body validation with the platform's 422 shape: one JSON:API error per problem, titled
 * "invalid attribute", with a `source.pointer` at the attribute and a Rails-style detail ("X can't be blank").
 */
import { invalid, invalidMany } from './http.js';

/** Collects 422 problems so that one answer lists them all. */
export class Problems {
  private readonly list: { pointer: string; detail: string }[] = [];

  /** Records a problem with an attribute. */
  add(attribute: string, detail: string): void {
    this.list.push({ pointer: `/data/attributes/${attribute}`, detail });
  }

  /** True when nothing was recorded. */
  get empty(): boolean {
    return this.list.length === 0;
  }

  /** Throws the 422 answer when anything was recorded. */
  throwIfAny(): void {
    if (this.list.length > 0) throw invalidMany(this.list);
  }
}

/** The `data.attributes` object of a JSON:API body; 422 at `/data` when the envelope is wrong. */
export function attributesOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('/data', 'The request body must be a JSON:API document with a data object');
  }
  const data = (body as { data?: unknown }).data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw invalid('/data', 'data must be an object');
  }
  const attributes = (data as { attributes?: unknown }).attributes;
  if (attributes === undefined) return {};
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes)) {
    throw invalid('/data/attributes', 'attributes must be an object');
  }
  return attributes as Record<string, unknown>;
}

/** Human label of an attribute as Rails would print it: `key-id` → `Key id`. */
export function label(attribute: string): string {
  const words = attribute.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A required, non-empty string attribute; records a problem and returns undefined otherwise. */
export function requiredString(
  attrs: Record<string, unknown>,
  attribute: string,
  problems: Problems,
): string | undefined {
  const value = attrs[attribute];
  if (value === undefined || value === null || value === '') {
    problems.add(attribute, `${label(attribute)} can't be blank`);
    return undefined;
  }
  if (typeof value !== 'string') {
    problems.add(attribute, `${label(attribute)} must be a string`);
    return undefined;
  }
  return value;
}
