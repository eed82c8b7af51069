/**
 * Compares a real answer with a documented sample by SHAPE: the same keys at every level (attribute,
 * relationship and link names), the same JSON types, and, for values that depend on state (ids, times, links),
 * the same format rather than the same value. JSON:API `type` values must be equal. Values of the sample that the test maps to its own (`vars`:
 * organization, provider name, version…) must match exactly, also inside link paths.
 */
import { isObject } from './json.js';

/** Sample value → the value the test used instead (e.g. `{ hashicorp: 'example-org', aws: 'example' }`). */
export type ShapeVars = Record<string, string>;

const ID_FORMATS: [RegExp, RegExp, string][] = [
  [/^prov-[A-Za-z0-9]{16}$/, /^prov-[A-Za-z0-9]{16}$/, 'a provider id (prov- + 16 alphanumerics)'],
  [/^provver-[A-Za-z0-9]{16}$/, /^provver-[A-Za-z0-9]{16}$/, 'a version id (provver- + 16 alphanumerics)'],
  [
    /^provpltfrm-[A-Za-z0-9]{16}$/,
    /^provpltfrm-[A-Za-z0-9]{16}$/,
    'a platform id (provpltfrm- + 16 alphanumerics)',
  ],
  [
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
    'a millisecond ISO 8601 time (2022-02-11T19:16:59.876Z)',
  ],
  [
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
    'a whole-second ISO 8601 time (2022-02-11T19:16:59Z)',
  ],
  [/^tb-[A-Za-z0-9]{16}$/, /^tb-[A-Za-z0-9]{16}$/, 'a tag binding id (tb- + 16 alphanumerics)'],
  [
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    'a UUID',
  ],
  [/^[0-9a-f]{64}$/, /^[0-9a-f]{64}$/, 'a SHA-256 in lower-case hex'],
  [/^[0-9A-F]{16}$/, /^[0-9A-F]{16}$/, 'a long key id (16 upper-case hex digits)'],
  [/^-----BEGIN PGP PUBLIC KEY BLOCK-----/, /^-----BEGIN PGP PUBLIC KEY BLOCK-----/, 'an armored public key'],
];

const ARCHIVIST_SAMPLE = /^https:\/\/archivist\.terraform\.io\/v1\/object\//;
const ARCHIVIST_ACTUAL = /^https?:\/\/[^/]+(?:\/_archivist)?\/v1\/object\/[^/?#\s]+$/;
const API_HOST_SAMPLE = /^https:\/\/app\.terraform\.io(?=\/)/;

/** Every difference between `actual` and the sample, as readable lines (empty when the shapes agree). */
export function shapeMismatches(
  actual: unknown,
  sample: unknown,
  vars: ShapeVars = {},
  path = '$',
): string[] {
  if (sample === null) return actual === null ? [] : [`${path}: expected null, got ${describe(actual)}`];
  if (Array.isArray(sample)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${describe(actual)}`];
    if (actual.length === 0) return [];
    const template: unknown = sample[0];
    if (template === undefined) {
      return [`${path}: the sample's array is empty, so it cannot vouch for ${actual.length} element(s)`];
    }
    return actual.flatMap((item, i) => shapeMismatches(item, template, vars, `${path}[${i}]`));
  }
  if (isObject(sample)) {
    if (!isObject(actual)) return [`${path}: expected an object, got ${describe(actual)}`];
    const out: string[] = [];
    for (const key of Object.keys(sample)) {
      if (!(key in actual)) out.push(`${path}: missing key "${key}"`);
    }
    for (const key of Object.keys(actual)) {
      if (!(key in sample)) out.push(`${path}: unexpected key "${key}" (not in the documented sample)`);
    }
    for (const key of Object.keys(sample)) {
      if (key in actual) out.push(...shapeMismatches(actual[key], sample[key], vars, `${path}.${key}`));
    }
    return out;
  }
  if (typeof sample === 'number') {
    if (typeof actual !== 'number') return [`${path}: expected a number, got ${describe(actual)}`];
    if (Number.isInteger(sample) && !Number.isInteger(actual))
      return [`${path}: expected an integer, got ${actual}`];
    return [];
  }
  if (typeof sample === 'boolean') {
    return typeof actual === 'boolean' ? [] : [`${path}: expected a boolean, got ${describe(actual)}`];
  }
  if (typeof sample === 'string') {
    if (typeof actual !== 'string') return [`${path}: expected a string, got ${describe(actual)}`];
    return stringMismatch(actual, sample, vars, path);
  }
  return [`${path}: the sample holds an unsupported value ${describe(sample)}`];
}

function stringMismatch(actual: string, sample: string, vars: ShapeVars, path: string): string[] {
  const mapped = vars[sample];
  if (mapped !== undefined) {
    return actual === mapped
      ? []
      : [`${path}: expected ${JSON.stringify(mapped)}, got ${JSON.stringify(actual)}`];
  }
  if (path.endsWith('.type')) {
    // JSON:API resource types are constants of the API, not state: they must match exactly.
    return actual === sample
      ? []
      : [`${path}: expected type ${JSON.stringify(sample)}, got ${JSON.stringify(actual)}`];
  }
  if (path.endsWith('.id') && /^\d+$/.test(sample)) {
    return /^\d+$/.test(actual)
      ? []
      : [`${path}: expected a numeric string id, got ${JSON.stringify(actual)}`];
  }
  for (const [samplePattern, actualPattern, what] of ID_FORMATS) {
    if (samplePattern.test(sample)) {
      return actualPattern.test(actual) ? [] : [`${path}: expected ${what}, got ${JSON.stringify(actual)}`];
    }
  }
  if (ARCHIVIST_SAMPLE.test(sample)) {
    return ARCHIVIST_ACTUAL.test(actual)
      ? []
      : [`${path}: expected an archivist object URL (…/v1/object/<secret>), got ${JSON.stringify(actual)}`];
  }
  if (API_HOST_SAMPLE.test(sample) || sample.startsWith('/')) {
    return linkMismatch(actual, sample, vars, path);
  }
  return [];
}

/**
 * A link: absolute links must be absolute (any host), relative ones relative; the paths must agree segment by
 * segment (sample segments mapped through `vars`, numeric segments numeric); the query must carry the same
 * parameter names in the same order, page numbers and sizes as digits.
 */
function linkMismatch(actual: string, sample: string, vars: ShapeVars, path: string): string[] {
  const absolute = API_HOST_SAMPLE.test(sample);
  const base = 'http://relative.invalid';
  if (absolute && !/^https?:\/\/[^/]+\//.test(actual)) {
    return [`${path}: expected an absolute link like ${sample}, got ${JSON.stringify(actual)}`];
  }
  if (!absolute && !actual.startsWith('/')) {
    return [`${path}: expected a relative link like ${sample}, got ${JSON.stringify(actual)}`];
  }
  const s = new URL(sample, base);
  const a = new URL(actual, base);
  const out: string[] = [];
  const sSegments = s.pathname.split('/');
  const aSegments = a.pathname.split('/');
  const sameSegments =
    sSegments.length === aSegments.length &&
    sSegments.every((segment, i) => {
      const got = decodeURIComponent(aSegments[i] ?? '');
      const want = decodeURIComponent(segment);
      const mapped = vars[want];
      if (mapped !== undefined) return got === mapped;
      if (/^\d+$/.test(want)) return /^\d+$/.test(got);
      // An id in a link (the version's in its tag-bindings link) is state: its format must agree.
      const id = ID_FORMATS.find(([samplePattern]) => samplePattern.test(want));
      if (id !== undefined) return id[1].test(got);
      return got === want;
    });
  if (!sameSegments) out.push(`${path}: expected a path like ${s.pathname}, got ${a.pathname}`);
  const sKeys = [...s.searchParams.keys()];
  const aKeys = [...a.searchParams.keys()];
  if (sKeys.join('&') !== aKeys.join('&')) {
    out.push(`${path}: expected query parameters ${sKeys.join(', ')}, got ${aKeys.join(', ') || 'none'}`);
  }
  for (const key of ['page[number]', 'page[size]']) {
    const value = a.searchParams.get(key);
    if (s.searchParams.has(key) && (value === null || !/^\d+$/.test(value))) {
      out.push(`${path}: ${key} should be a number, got ${JSON.stringify(value)}`);
    }
  }
  const rawSampleQuery = sample.split('?')[1] ?? '';
  const rawActualQuery = actual.split('?')[1] ?? '';
  if (rawSampleQuery.includes('%5B') && !rawActualQuery.includes('%5B')) {
    out.push(`${path}: the sample percent-encodes brackets (page%5Bnumber%5D), got ${rawActualQuery}`);
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}
