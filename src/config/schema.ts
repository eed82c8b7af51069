/**
 * What a configuration file may hold, and how a file's contents are checked. Mistakes are reported with the
 * file, the key and the expected type; unknown keys only warn, so an older binary tolerates a newer file.
 */
import * as z from 'zod';
import { UsageError } from '../errors.js';
import { PROTOCOL_VERSIONS } from '../terraform/names.js';
import { isDuration } from './duration.js';

/** The keys a configuration file may set; all optional. */
export const configSchema = z.object({
  hostname: z.string().min(1).optional(),
  organization: z.string().min(1).optional(),
  namespace: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  concurrency: z.union([z.number().int().min(1).max(32), z.literal('auto')]).optional(),
  waitTimeout: z.union([z.string(), z.number()]).refine(isDuration).optional(),
  protocols: z.array(z.enum(PROTOCOL_VERSIONS)).min(1).optional(),
  key: z.string().min(1).optional(),
  color: z.boolean().optional(),
  policy: z.string().min(1).optional(),
});

/** A validated configuration file. */
export type FileConfig = z.infer<typeof configSchema>;

/** The keys `configSchema` knows. */
export const CONFIG_KEYS = Object.keys(configSchema.shape) as (keyof FileConfig)[];

// Written for people: what each key must be, used in the error for a value of the wrong type.
const EXPECTED: Record<keyof FileConfig, string> = {
  hostname: 'a hostname or URL string, such as "app.terraform.io"',
  organization: 'a non-empty string',
  namespace: 'a non-empty string',
  name: 'a non-empty string',
  concurrency: '"auto" or an integer from 1 to 32',
  waitTimeout: 'a duration string such as "10m" or "1h30m", or a number of seconds',
  protocols: 'a non-empty array of "4.0", "5.0" or "6.0"',
  key: 'a path string to an ASCII-armored public key file',
  color: 'true or false',
  policy: 'a path string to a YAML policy file (docs/supply-chain.md)',
};

/** Checks a loaded file's contents; throws UsageError for mistakes and returns warnings for unknown keys. */
export function validateConfig(raw: unknown, filepath: string): { config: FileConfig; warnings: string[] } {
  if (raw === undefined || raw === null) return { config: {}, warnings: [] };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new UsageError(`${filepath} must hold an object of settings, not ${describeKind(raw)}`, {
      hint: `Write the settings as keys, for example {"organization": "acme"}; known keys: ${CONFIG_KEYS.join(', ')}.`,
    });
  }
  const entries = Object.entries(raw as Record<string, unknown>);

  // Config files get committed and shared; a token there is a leak waiting to happen, so refuse it outright.
  const tokenKey = entries.find(([key]) => /token/i.test(key))?.[0];
  if (tokenKey !== undefined) {
    throw new UsageError(`${filepath} contains "${tokenKey}": a token in a configuration file is refused`, {
      hint: 'Remove it, then set TF_TOKEN_<host> or TFE_TOKEN in the environment, or run `terraform login <host>`.',
    });
  }

  const known: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const [key, value] of entries) {
    if ((CONFIG_KEYS as string[]).includes(key)) known[key] = value;
    else warnings.push(`unknown key "${key}" in ${filepath} (ignored)${suggestion(key)}`);
  }

  const parsed = configSchema.safeParse(known);
  if (!parsed.success) {
    const problems = new Map<string, string>();
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0]) as keyof FileConfig;
      if (!problems.has(key)) {
        problems.set(key, `"${key}" must be ${EXPECTED[key]} (got ${describeValue(known[key])})`);
      }
    }
    throw new UsageError(`Invalid configuration in ${filepath}: ${[...problems.values()].join('; ')}`, {
      hint: `Fix the value in ${filepath}.`,
      details: { file: filepath, keys: [...problems.keys()] },
    });
  }
  return { config: parsed.data, warnings };
}

/** " (did you mean "waitTimeout"?)" for keys that differ from a known one only in case, `-` or `_`. */
function suggestion(key: string): string {
  const simplify = (text: string): string => text.toLowerCase().replace(/[-_]/g, '');
  const match = CONFIG_KEYS.find((known) => simplify(known) === simplify(key));
  return match === undefined ? '' : ` (did you mean "${match}"?)`;
}

function describeKind(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function describeValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
