/**
 * Validation of a SARIF 2.1.0 document against the published schema (assets/, see ./sarifSchema.ts) in time
 * linear in its size, a piece at a time, yielding to the event loop between pieces: an integrator that reads a
 * report keeps answering its other requests meanwhile.
 *
 * Why not one call of a validator compiled from the schema: the schema puts `uniqueItems` on 77 arrays (rules,
 * artifacts, taxa, locations…), and ajv checks uniqueness of object items by comparing every pair. A valid
 * report with 40 000 rules took 30 to 50 s in that check, on the server's one thread. Here:
 * - each definition of the schema is compiled "shallow": a property that refers to another definition (directly,
 *   as array items, or as the values of a map) accepts anything there, and this module walks into it and checks
 *   it as its own piece with that definition's validator. Every value of the document is thus checked once, by
 *   exactly the rules the schema gives it; the walk yields to the event loop every few milliseconds.
 * - `uniqueItems` is checked here, not by ajv: each value gets a structural id (equal ids for deep-equal JSON
 *   values, the id of an object or array made from its members' ids, each value's id computed once), and an array
 *   is unique when its items' ids are. On arrays of plain values the same check runs as an ajv keyword.
 * - the arrays' `minItems` on the definitions walked into are checked here too (the shallow schema no longer has
 *   their items).
 * Messages name the place and the published schema's rule, as a validator of the whole schema would
 * (`runs[0].results[2].level must be equal to one of the allowed values: … (SARIF 2.1.0 schema rule
 * #/definitions/result/properties/level/enum)`).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import ajvDraft04, { type ErrorObject, type ValidateFunction } from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { sarifSchema } from './sarifSchema.js';

/** A SARIF document that breaks the schema (thrown as such; sarif.ts turns it into its own error). */
export class SarifSchemaError extends Error {}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What a property refers to: a definition, an array of one, or a map of one; undefined for anything else. */
type Link = { kind: 'one' | 'items' | 'map'; definition: string; minItems: number; unique: boolean };

/** A definition made shallow, with the links this module follows itself; compiled on first use. */
interface Piece {
  schema: Obj;
  validate?: ValidateFunction;
  links: Map<string, Link>;
}

const REF = /^#\/definitions\/([A-Za-z]+)$/;

function refOf(schema: unknown): string | undefined {
  return isObj(schema) && typeof schema.$ref === 'string' ? REF.exec(schema.$ref)?.[1] : undefined;
}

/** A definition (or the root schema) without its links, and the links. */
function shallow(definition: Obj): Piece {
  const links = new Map<string, Link>();
  const properties: Obj = {};
  for (const [name, property] of Object.entries(isObj(definition.properties) ? definition.properties : {})) {
    const schema = isObj(property) ? property : {};
    const direct = refOf(schema);
    const items = refOf(schema.items);
    const values = refOf(schema.additionalProperties);
    if (direct !== undefined) {
      links.set(name, { kind: 'one', definition: direct, minItems: 0, unique: false });
      properties[name] = {};
    } else if (items !== undefined) {
      const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
      links.set(name, { kind: 'items', definition: items, minItems, unique: schema.uniqueItems === true });
      properties[name] = { type: 'array' };
    } else if (values !== undefined) {
      links.set(name, { kind: 'map', definition: values, minItems: 0, unique: false });
      properties[name] = { type: 'object' };
    } else if (schema.uniqueItems === true) {
      const { uniqueItems: _, ...rest } = schema;
      properties[name] = { ...rest, uniqueValues: true };
    } else {
      properties[name] = schema;
    }
  }
  const { definitions: _d, properties: _p, id: _i, $schema: _s, ...rest } = definition;
  const schema: Obj = { ...rest, properties };
  if (JSON.stringify(schema).includes('"$ref"')) {
    throw new Error('the SARIF schema refers to a definition where this module does not follow it');
  }
  return { schema, links };
}

/**
 * Structural ids: deep-equal JSON values get the same id. An object's or array's id is made from its members'
 * ids (and its keys'), so each value is read once, never its whole subtree again at every level.
 */
class StructuralIds {
  private readonly ids = new Map<string, number>();
  private readonly known = new WeakMap<object, number>();

  private intern(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }

  of(value: unknown): number {
    // The first character keeps the kinds apart: s string, n number, b boolean, z null, [ array, { object.
    if (typeof value === 'string') return this.intern(`s${value}`);
    if (typeof value === 'number') return this.intern(`n${value}`);
    if (typeof value === 'boolean') return this.intern(`b${value}`);
    if (typeof value !== 'object' || value === null) return this.intern('z');
    const known = this.known.get(value);
    if (known !== undefined) return known;
    let key: string;
    if (Array.isArray(value)) {
      key = '[';
      for (const item of value) key += `${this.of(item)},`;
    } else {
      key = '{';
      for (const name of Object.keys(value).sort()) {
        key += `${this.intern(`s${name}`)}:${this.of((value as Obj)[name])},`;
      }
    }
    const id = this.intern(key);
    this.known.set(value, id);
    return id;
  }
}

/** The ids of the validation under way (ajv's keyword functions are called synchronously within it). */
let activeIds: StructuralIds | undefined;

/** Where an array first repeats an item: [the repeat, the earlier one], or undefined. */
function firstRepeat(items: readonly unknown[], ids: StructuralIds): [number, number] | undefined {
  const seen = new Map<number, number>();
  for (let i = 0; i < items.length; i++) {
    const id = ids.of(items[i]);
    const earlier = seen.get(id);
    if (earlier !== undefined) return [i, earlier];
    seen.set(id, i);
  }
  return undefined;
}

type Ajv = InstanceType<typeof ajvDraft04.default>;

let prepared: { ajv: Ajv; pieces: Map<string, Piece>; root: Piece } | undefined;

/** The definitions made shallow (not compiled yet) and the validator they are compiled with. */
function prepare(): { ajv: Ajv; pieces: Map<string, Piece>; root: Piece } {
  // Both packages are CommonJS whose module.exports also carries itself as `default`, which is what TypeScript
  // sees through an ES import. Non-Unicode regular expressions: one of the schema's patterns needs them.
  const ajv = new ajvDraft04.default({ allErrors: false, strict: false, unicodeRegExp: false });
  ajvFormats.default(ajv);
  ajv.addKeyword({
    keyword: 'uniqueValues',
    type: 'array',
    schemaType: 'boolean',
    errors: true,
    validate: function uniqueValues(_schema: boolean, data: unknown[]): boolean {
      const repeat = firstRepeat(data, activeIds ?? new StructuralIds());
      if (repeat === undefined) return true;
      (uniqueValues as { errors?: Partial<ErrorObject>[] }).errors = [
        { keyword: 'uniqueItems', message: duplicateMessage(repeat), params: {} },
      ];
      return false;
    },
  });
  const document = sarifSchema();
  const definitions = isObj(document.definitions) ? document.definitions : {};
  const pieces = new Map<string, Piece>();
  for (const [name, definition] of Object.entries(definitions)) {
    pieces.set(name, shallow(isObj(definition) ? definition : {}));
  }
  return { ajv, pieces, root: shallow(document) };
}

/** The validator of a piece, compiled on first use (a few milliseconds each, never all at once). */
function validatorOf(ajv: Ajv, piece: Piece): ValidateFunction {
  return (piece.validate ??= ajv.compile(piece.schema));
}

function duplicateMessage([repeat, earlier]: [number, number]): string {
  return `must NOT have duplicate items (items ## ${earlier} and ${repeat} are identical)`;
}

/** `/runs/0/results/2/level` → `runs[0].results[2].level`. */
function dotted(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path === '' ? part : `${path}.${part}`),
      '',
    );
}

function pointerPart(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The error of a piece at `pointer`, checked against `definition` ('' for the root). */
function schemaError(pointer: string, definition: string, error: ErrorObject): SarifSchemaError {
  const where = dotted(pointer + error.instancePath) || 'the document';
  const params = error.params as { allowedValues?: unknown[]; additionalProperty?: string };
  const detail =
    params.allowedValues !== undefined
      ? `${error.message ?? 'is not allowed'}: ${params.allowedValues.map((v) => String(v)).join(', ')}`
      : params.additionalProperty !== undefined
        ? `has a property the schema does not allow: "${params.additionalProperty}"`
        : (error.message ?? 'is not allowed');
  const rule = `${definition === '' ? '#' : `#/definitions/${definition}`}${error.schemaPath.slice(1)}`;
  return new SarifSchemaError(
    `${where} ${detail} (SARIF 2.1.0 schema rule ${rule.replace(/\/uniqueValues$/, '/uniqueItems')})`,
  );
}

/** An array whose items must be unique: the ids seen so far, and how to name a repeat. */
interface UniqueArray {
  seen: Map<number, number>;
  /** The task of the array itself, and its schema rule. */
  list: Task;
  rule: string;
}

/**
 * A value to check: its place (its parent and its key there: the JSON pointer is made only for a message) and the
 * definition it must follow ('' for the root; unused for the arrays and maps that are only places).
 */
interface Task {
  parent?: Task;
  key?: string | number;
  definition: string;
  value: unknown;
  /** For an item of an array whose items must be unique: that array, and the item's index. */
  unique?: { array: UniqueArray; index: number };
}

/** The JSON pointer of a task's value. */
function pointerOf(task: Task): string {
  const parts: string[] = [];
  for (let at: Task | undefined = task; at?.key !== undefined; at = at.parent) {
    parts.push(typeof at.key === 'number' ? String(at.key) : pointerPart(at.key));
  }
  return parts.length === 0 ? '' : `/${parts.reverse().join('/')}`;
}

/** The links of one checked object, as the tasks of its members (properties in the schema's order). */
function follow(task: Task, piece: Piece): Task[] {
  const out: Task[] = [];
  if (!isObj(task.value)) return out;
  for (const [name, link] of piece.links) {
    const value = task.value[name];
    if (value === undefined) continue;
    const rule = `${task.definition === '' ? '#' : `#/definitions/${task.definition}`}/properties/${name}`;
    const { definition } = link;
    if (link.kind === 'one') out.push({ parent: task, key: name, definition, value });
    else if (link.kind === 'map' && isObj(value)) {
      const map: Task = { parent: task, key: name, definition: '', value };
      for (const [key, member] of Object.entries(value))
        out.push({ parent: map, key, definition, value: member });
    } else if (link.kind === 'items' && Array.isArray(value)) {
      const list: Task = { parent: task, key: name, definition: '', value };
      if (value.length < link.minItems) {
        throw new SarifSchemaError(
          `${dotted(pointerOf(list))} must NOT have fewer than ${link.minItems} items (SARIF 2.1.0 schema rule ${rule}/minItems)`,
        );
      }
      // Each item's id is taken when the item itself is checked: a long array is not hashed in one go.
      const array = link.unique ? { seen: new Map<number, number>(), list, rule } : undefined;
      for (let index = 0; index < value.length; index++) {
        const item: Task = { parent: list, key: index, definition, value: value[index] };
        if (array !== undefined) item.unique = { array, index };
        out.push(item);
      }
    }
  }
  return out;
}

/** Checks one task's value against its definition and its array's uniqueness; returns its members' tasks. */
function check(task: Task, piece: Piece, ajv: Ajv, ids: StructuralIds): Task[] {
  const validate = validatorOf(ajv, piece);
  if (!validate(task.value)) {
    const [error] = validate.errors ?? [];
    if (error === undefined)
      throw new SarifSchemaError('the document does not follow the SARIF 2.1.0 schema');
    throw schemaError(pointerOf(task), task.definition, error);
  }
  if (task.unique !== undefined) {
    const { array, index } = task.unique;
    const id = ids.of(task.value);
    const earlier = array.seen.get(id);
    if (earlier !== undefined) {
      throw new SarifSchemaError(
        `${dotted(pointerOf(array.list))} ${duplicateMessage([index, earlier])} (SARIF 2.1.0 schema rule ${array.rule}/uniqueItems)`,
      );
    }
    array.seen.set(id, index);
  }
  return follow(task, piece);
}

/** How long the walk runs before it lets the event loop turn. */
const SLICE_MS = 5;

/**
 * Validates a parsed document against the SARIF 2.1.0 schema; rejects with SarifSchemaError naming where and
 * which rule. Yields to the event loop every few milliseconds.
 */
export async function validateSarifSchema(doc: unknown): Promise<void> {
  const { ajv, pieces, root } = (prepared ??= prepare());
  const ids = new StructuralIds();
  // A stack, members pushed in reverse: depth first, each object before its members, these in order.
  const stack: Task[] = [{ definition: '', value: doc }];
  let sliceStart = performance.now();
  while (stack.length > 0) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const task = stack.pop()!;
    const piece = task.definition === '' ? root : pieces.get(task.definition);
    if (piece === undefined) throw new Error(`no SARIF schema definition "${task.definition}"`);
    activeIds = ids;
    try {
      const members = check(task, piece, ajv, ids);
      for (let i = members.length - 1; i >= 0; i--) stack.push(members[i]!);
    } catch (error) {
      // A document nested deeper than the stack (thousands of levels) is no report to read.
      if (error instanceof RangeError) {
        throw new SarifSchemaError('the document is nested too deeply to be checked');
      }
      throw error;
    } finally {
      activeIds = undefined;
    }
  }
}
