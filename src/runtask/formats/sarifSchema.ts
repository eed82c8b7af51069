/**
 * The published JSON schema of SARIF 2.1.0, shipped in `assets/` (three folders up from both
 * `src/runtask/formats/` and `dist/runtask/formats/`; assets/README.md says where it comes from), read on first
 * use. The bundles replace this module by one holding the schema (scripts/bundle.mjs).
 */
import { readFileSync } from 'node:fs';

/** The schema document. */
export function sarifSchema(): Record<string, unknown> {
  const text = readFileSync(new URL('../../../assets/sarif-schema-2.1.0.json', import.meta.url), 'utf8');
  return JSON.parse(text) as Record<string, unknown>;
}
