/**
 * vitest's asymmetric matchers typed as the value they stand for. vitest types them `any`, which the
 * type-checked lint rightly refuses inside an expected object; these say what each one matches.
 */
import { expect } from 'vitest';

/** A string matching `pattern` (expect.stringMatching). */
export function aStringMatching(pattern: RegExp | string): string {
  return expect.stringMatching(pattern) as string;
}

/** A string containing `part` (expect.stringContaining). */
export function aStringContaining(part: string): string {
  return expect.stringContaining(part) as string;
}

/** Any string (expect.any(String)). */
export function anyString(): string {
  return expect.any(String) as string;
}

/** Any number (expect.any(Number)). */
export function anyNumber(): number {
  return expect.any(Number) as number;
}

/** An object holding at least `fields` (expect.objectContaining). */
export function anObjectContaining<T extends object>(fields: T): T {
  return expect.objectContaining(fields as Record<string, unknown>) as T;
}
