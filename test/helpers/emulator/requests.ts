/**
 * Watching the requests an in-process emulator receives: a listener at each request's start (which may inject a
 * fault into that one request), waiting for a logged request, and waiting until every started one is logged.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRule } from '../../../src/emulator/faults.js';
import { ARCHIVIST_PREFIX } from '../../../src/emulator/links.js';
import type { RequestRecord } from '../../../src/emulator/requestLog.js';
import type { Emulator } from '../../../src/emulator/server.js';

/** A request as a start listener sees it: for an archivist link, also the key of the object it names. */
export interface RequestStart {
  method: string;
  path: string;
  objectKey: string | undefined;
}

const startListeners = new WeakMap<Emulator, Set<(request: RequestStart) => FaultRule | void>>();

/**
 * Calls `listener` at the start of every request the emulator receives, before it is handled and in the same
 * turn (the emulator runs in the test's process): a test changes the world there at an exact moment between
 * two requests, for instance a release file after verification and before its upload. A listener that returns
 * a fault rule makes this one request fail that way. Returns the function that removes the listener.
 */
export function onRequestStart(
  emulator: Emulator,
  listener: (request: RequestStart) => FaultRule | void,
): () => void {
  let listeners = startListeners.get(emulator);
  if (listeners === undefined) {
    const all = new Set<(request: RequestStart) => FaultRule | void>();
    listeners = all;
    startListeners.set(emulator, all);
    const decide = emulator.faults.decide.bind(emulator.faults);
    emulator.faults.decide = (method, urlPath) => {
      const request = { method, path: urlPath, objectKey: objectKeyOf(urlPath) };
      let injected: FaultRule | undefined;
      for (const f of all) injected = f(request) ?? injected;
      if (injected === undefined) return decide(method, urlPath);
      return { rule: injected, index: emulator.faults.fired.length };
    };
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The object key an archivist link's path names (its payload is `op:key:expiry`, sealed but not hidden). */
function objectKeyOf(urlPath: string): string | undefined {
  if (!urlPath.startsWith(ARCHIVIST_PREFIX)) return undefined;
  const payload = urlPath.slice(ARCHIVIST_PREFIX.length).split('.')[0] ?? '';
  return Buffer.from(payload, 'base64url').toString('utf8').split(':')[1];
}

/**
 * Resolves once the emulator has logged a request matching `match` (a request is logged when its answer is
 * complete or its connection closes, which for a client that gave up can come after the client's error).
 */
export async function loggedRequest(
  emulator: Emulator,
  match: (record: RequestRecord) => boolean,
): Promise<RequestRecord> {
  for (;;) {
    const found = emulator.requestLog.records.find(match);
    if (found !== undefined) return found;
    await sleep(5);
  }
}

/**
 * Counts the requests the emulator starts and logs from now on; `settled()` resolves once every started one is
 * logged (answered, or its connection closed: a client that gave up is logged after its own error).
 */
export function trackRequests(emulator: Emulator): { settled: () => Promise<void> } {
  let started = 0;
  let ended = 0;
  onRequestStart(emulator, () => {
    started++;
  });
  const add = emulator.requestLog.add.bind(emulator.requestLog);
  emulator.requestLog.add = (record) => {
    add(record);
    ended++;
  };
  return {
    async settled() {
      while (ended < started) await sleep(5);
    },
  };
}
