/** Small typed accessors for JSON answers held as `unknown`: each narrows or throws with the path it was given. */

/** A JSON object (not null, not an array). */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object. */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a dotted path (`data.attributes.version`, `data.0.id`); throws when a step is missing. */
export function at(value: unknown, path: string): unknown {
  let current = value;
  for (const step of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(step)) {
      if (Number(step) >= current.length) throw new Error(`${path}: index ${step} is out of range`);
      current = current[Number(step)];
    } else if (isObject(current)) {
      if (!(step in current)) throw new Error(`${path}: no key "${step}"`);
      current = current[step];
    } else {
      throw new Error(`${path}: cannot step into ${JSON.stringify(current)} with "${step}"`);
    }
  }
  return current;
}

/** The string at `path`. */
export function str(value: unknown, path: string): string {
  const found = at(value, path);
  if (typeof found !== 'string') throw new Error(`${path}: expected a string, got ${JSON.stringify(found)}`);
  return found;
}

/** The number at `path`. */
export function num(value: unknown, path: string): number {
  const found = at(value, path);
  if (typeof found !== 'number') throw new Error(`${path}: expected a number, got ${JSON.stringify(found)}`);
  return found;
}

/** The array at `path`. */
export function arr(value: unknown, path: string): unknown[] {
  const found = at(value, path);
  if (!Array.isArray(found)) throw new Error(`${path}: expected an array, got ${JSON.stringify(found)}`);
  return found;
}

/** The object at `path`. */
export function obj(value: unknown, path: string): JsonObject {
  const found = at(value, path);
  if (!isObject(found)) throw new Error(`${path}: expected an object, got ${JSON.stringify(found)}`);
  return found;
}

/** A deep copy of a JSON value with the value at `path` replaced (for sample variants). */
export function replaceAt<T>(value: T, path: string, replacement: unknown): T {
  const copy = JSON.parse(JSON.stringify(value)) as unknown;
  const steps = path.split('.');
  const last = steps.pop();
  const parent = steps.length === 0 ? copy : at(copy, steps.join('.'));
  if (last === undefined || !isObject(parent)) throw new Error(`replaceAt: ${path} has no parent object`);
  parent[last] = replacement;
  return copy as T;
}
