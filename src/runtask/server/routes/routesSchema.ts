/**
 * The fields of a route in a routes file (routesFile.ts) and their check: a zod schema, an error for people
 * naming the file, the route and the field for any mistake, a field that would hold a key refused outright, and
 * a misspelled field named with the one it resembles.
 */
import * as z from 'zod';
import { isDuration } from '../../../config/duration.js';
import { UsageError } from '../../../errors.js';

/** The fields of one route. */
export const routeSchema = z.strictObject({
  path: z.string().min(1),
  exec: z.string().trim().min(1),
  'hmac-key-file': z.string().min(1).optional(),
  'hmac-key-env': z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional(),
  timeout: z.union([z.string(), z.number()]).refine(isDuration).optional(),
  'max-jobs': z.number().int().min(1).max(1000).optional(),
  'platform-hosts': z.array(z.string().min(1)).min(1).optional(),
  'result-format': z.string().min(1).optional(),
  'fail-on': z.string().min(1).optional(),
  'with-configuration': z.boolean().optional(),
});

export type RouteEntry = z.infer<typeof routeSchema>;
export type Field = keyof RouteEntry;

export const FIELDS = Object.keys(routeSchema.shape) as Field[];

// Written for people: what each field must be, used in the error for a value of the wrong type.
const EXPECTED: Record<Field, string> = {
  path: 'a path string such as "/cost" or "/"',
  exec: 'a non-empty command string',
  'hmac-key-file': 'the path of a file holding the HMAC key',
  'hmac-key-env': 'the name of an environment variable holding the HMAC key, such as "ACME_HMAC_KEY"',
  timeout: 'a duration string such as "20m" or "1h", or a number of seconds',
  'max-jobs': 'an integer from 1 to 1000',
  'platform-hosts': 'a non-empty array of hosts, host:port or URLs',
  'result-format': 'one of auto, json, exit-code, sarif, junit',
  'fail-on': 'one of error, warning, note, never',
  'with-configuration': 'true or false',
};

/** Where a problem is: the file, and the route (1-based, with its path when it has one). */
export interface Place {
  file: string;
  index?: number;
  path?: string;
}

function where(place: Place): string {
  if (place.index === undefined) return place.file;
  return `${place.file}: route ${place.index}${place.path === undefined ? '' : ` (${place.path})`}`;
}

export function problem(place: Place, field: string | undefined, message: string, hint: string): UsageError {
  return new UsageError(`Invalid routes file ${where(place)}: ${message}`, {
    hint,
    details: {
      file: place.file,
      ...(place.index === undefined ? {} : { route: place.index }),
      ...(place.path === undefined ? {} : { path: place.path }),
      ...(field === undefined ? {} : { field }),
    },
  });
}

function describeValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** A field that would hold a secret itself. */
function looksSecret(field: string): boolean {
  return /(^|[-_])(key|secret|token|password)$/i.test(field) || /^hmac[-_]?key$/i.test(field);
}

/** Checks one route's fields; throws naming the route and the field. */
export function checkRoute(raw: unknown, place: Place): RouteEntry {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw problem(place, undefined, 'must be an object of fields', `Known fields: ${FIELDS.join(', ')}.`);
  }
  const entries = raw as Record<string, unknown>;
  if (typeof entries.path === 'string') place.path = entries.path;
  const secret = Object.keys(entries).find(looksSecret);
  if (secret !== undefined) {
    throw problem(
      place,
      secret,
      `"${secret}": a key or token in the routes file is refused`,
      'Remove it; give the route "hmac-key-file" (a file holding the key) or "hmac-key-env" (the variable holding it).',
    );
  }
  const parsed = routeSchema.safeParse(entries);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = issue.keys[0]!;
    const simplify = (text: string): string => text.toLowerCase().replace(/[-_]/g, '');
    const match = FIELDS.find((known) => simplify(known) === simplify(field));
    throw problem(
      place,
      field,
      `unknown field "${field}"${match === undefined ? '' : ` (did you mean "${match}"?)`}`,
      `Known fields: ${FIELDS.join(', ')}.`,
    );
  }
  const field = String(issue.path[0]) as Field;
  const value = entries[field];
  throw problem(
    place,
    field,
    value === undefined
      ? `"${field}" is missing: it must be ${EXPECTED[field]}`
      : `"${field}" must be ${EXPECTED[field]} (got ${describeValue(value)})`,
    `Fix "${field}" of route ${place.index} in ${place.file}.`,
  );
}
