/**
 * Creating without duplicating. A POST whose answer was lost (reset, timeout, 5xx, 429) may or may not have
 * taken effect, so it is never simply sent again: the resource is READ first, and created again only when it
 * is still absent. A 422 "has already been taken" means someone (often our own lost request) created it:
 * read it and continue.
 */
import { ApiError } from '../errors.js';
import { backoffDelay, pause, type BackoffPolicy } from '../registry/backoff.js';

/** What a create-or-adopt needs. */
export interface CreateOrAdoptInput<T> {
  /** `version 1.2.3`, `platform linux_amd64`: names the resource in notes and errors. */
  label: string;
  create: () => Promise<T>;
  /** Reads the resource; undefined when absent. */
  read: () => Promise<T | undefined>;
  retry: BackoffPolicy;
  signal?: AbortSignal | undefined;
  /** Tells the user why a create is being reconciled. */
  note: (text: string) => void;
}

/** The resource, and whether it was found rather than created by an answered request. */
export interface Adopted<T> {
  resource: T;
  /** True when the resource was found by reading after a lost answer or an "already taken". */
  adopted: boolean;
}

/** Creates a resource, reconciling lost answers and "already taken" by reading. */
export async function createOrAdopt<T>(input: CreateOrAdoptInput<T>): Promise<Adopted<T>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { resource: await input.create(), adopted: false };
    } catch (error) {
      if (alreadyTaken(error)) {
        input.note(`${input.label} already exists (422 "already taken"); reading it`);
        const found = await input.read();
        if (found !== undefined) return { resource: found, adopted: true };
        throw error;
      }
      const lost = lostAnswer(error);
      if (lost === undefined || attempt > input.retry.limit) throw error;
      input.note(`creating ${input.label}: no answer (${lost}); reading before creating again`);
      const found = await input.read();
      if (found !== undefined) return { resource: found, adopted: true };
      await pause(backoffDelay(attempt, input.retry), input.signal, `creating ${input.label}`);
    }
  }
}

/** True for the registry's 422 "… has already been taken". */
export function alreadyTaken(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    error.status === 422 &&
    /already been taken/i.test(error.serverDetail ?? error.message)
  );
}

/** Why a create's answer says nothing about whether it happened (reset, timeout, 408/429/5xx), else undefined. */
export function lostAnswer(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.status === 0) return String(error.details?.reason ?? 'no answer');
  if (error.status === 408 || error.status === 429 || error.status >= 500) return `status ${error.status}`;
  return undefined;
}
