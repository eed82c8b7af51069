/**
 * Talking to the emulator over real HTTP (Node's global fetch, loopback only): one request, a client bound to a
 * token, the emulator's clients, and the checks of an answer's status and JSON:API error document.
 */
import { expect } from 'vitest';
import type { Emulator } from '../../../src/emulator/server.js';
import { arr, isObject } from '../json.js';

/** The JSON:API media type. */
export const JSONAPI = 'application/vnd.api+json';

/** One HTTP answer, read completely. */
export interface Reply {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: unknown;
}

/** What a request may carry. `token: undefined` sends no Authorization header at all. */
export interface CallOptions {
  token?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Sends one request to `base` + `path` (or to `path` itself when it is an absolute URL). */
export async function call(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { accept: JSONAPI, ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined;
  if (options.body instanceof Uint8Array) {
    body = options.body;
  } else if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= JSONAPI;
  }
  const url = /^https?:\/\//.test(path) ? path : `${base}${path}`;
  const response = await fetch(url, { method, headers, body });
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  if (/json/.test(response.headers.get('content-type') ?? '') && text.length > 0) json = JSON.parse(text);
  return { status: response.status, headers: response.headers, bytes, text, json };
}

/** A client bound to one emulator and one token. */
export class Api {
  constructor(
    readonly base: string,
    readonly token: string | undefined,
  ) {}

  /** GET. */
  get(path: string): Promise<Reply> {
    return call(this.base, 'GET', path, { token: this.token });
  }

  /** POST a JSON:API body. */
  post(path: string, body: unknown): Promise<Reply> {
    return call(this.base, 'POST', path, { token: this.token, body });
  }

  /** DELETE. */
  delete(path: string): Promise<Reply> {
    return call(this.base, 'DELETE', path, { token: this.token });
  }
}

/** Clients for the emulator's three tokens and for no token at all. */
export function clients(emulator: Emulator): { owner: Api; member: Api; outsider: Api; anonymous: Api } {
  return {
    owner: new Api(emulator.url, emulator.ownerToken),
    member: new Api(emulator.url, emulator.memberToken),
    outsider: new Api(emulator.url, emulator.outsiderToken),
    anonymous: new Api(emulator.url, undefined),
  };
}

/** Fails with the answer's body in the message when the status is not the expected one. */
export function expectStatus(reply: Reply, status: number): void {
  expect({ status: reply.status, body: reply.json ?? reply.text }).toMatchObject({ status });
}

/** Fails unless the answer is a success (2xx): archivist's answer to an upload is undocumented beyond that. */
export function expectSuccess(reply: Reply): void {
  expect(reply.status, `a 2xx answer, got ${reply.status}: ${reply.text}`).toBeGreaterThanOrEqual(200);
  expect(reply.status, `a 2xx answer, got ${reply.status}: ${reply.text}`).toBeLessThan(300);
}

/** One JSON:API error object as the tests read it. */
export interface ErrorObjectView {
  status: unknown;
  title: unknown;
  detail: unknown;
  pointer: unknown;
}

/**
 * Checks a JSON:API error document (D5, the documented error sample): the status, the media type, a non-empty
 * `errors` array of objects whose `status` is the status as a string; with `pointer`, one error must point at it.
 */
export function expectErrorDocument(
  reply: Reply,
  status: number,
  expected: { pointer?: string; detail?: RegExp } = {},
): ErrorObjectView[] {
  expectStatus(reply, status);
  expect(reply.headers.get('content-type') ?? '').toContain(JSONAPI);
  const errors = arr(reply.json, 'errors');
  expect(errors.length).toBeGreaterThan(0);
  const views = errors.map((e): ErrorObjectView => {
    if (!isObject(e)) throw new Error(`errors: ${JSON.stringify(e)} is not an object`);
    const source = e.source;
    return {
      status: e.status,
      title: e.title,
      detail: e.detail,
      pointer: isObject(source) ? source.pointer : undefined,
    };
  });
  for (const view of views) {
    expect(view.status).toBe(String(status));
    expect(typeof view.title === 'string' || typeof view.detail === 'string').toBe(true);
  }
  if (expected.pointer !== undefined) {
    const matching = views.filter((v) => v.pointer === expected.pointer);
    expect(matching, `an error pointing at ${expected.pointer} in ${reply.text}`).not.toHaveLength(0);
    if (expected.detail) {
      const details = matching.map((v) => v.detail);
      expect(details, `a detail matching ${String(expected.detail)}`).toContainEqual(
        expect.stringMatching(expected.detail),
      );
    }
  } else if (expected.detail) {
    const details = views.map((v) => v.detail);
    expect(details, `a detail matching ${String(expected.detail)}`).toContainEqual(
      expect.stringMatching(expected.detail),
    );
  }
  return views;
}
