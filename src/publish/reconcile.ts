/**
 * Creating without duplicating. A POST whose answer was lost (reset, timeout, 5xx, 429) may or may not have
 * taken effect, so it is never simply sent again: the resource is READ first (the `reconcile` hook of the one
 * retry policy, src/net/retry.ts), and created again only when it is still absent. A 422 "has already been
 * taken" means someone (often our own lost request) created it: read it and continue.
 */
import { ApiError } from '../errors.js';
import { retrying, type Backoff } from '../net/retry.js';
import { RESUME_HINT } from '../registry/httpErrors.js';

/** What a create-or-adopt needs. */
export interface CreateOrAdoptInput<T> {
  /** `version 1.2.3`, `platform linux_amd64`: names the resource in notes and errors. */
  label: string;
  create: () => Promise<T>;
  /** Reads the resource; undefined when absent. */
  read: () => Promise<T | undefined>;
  retry: Backoff;
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
  try {
    return await retrying<Adopted<T>>(async () => ({ resource: await input.create(), adopted: false }), {
      policy: input.retry,
      idempotent: false,
      signal: input.signal,
      interrupted: { message: `Interrupted while creating ${input.label}`, hint: RESUME_HINT },
      reconcile: async ({ reason }) => {
        input.note(`creating ${input.label}: no answer (${reason}); reading before creating again`);
        const found = await input.read();
        return found === undefined ? undefined : { value: { resource: found, adopted: true } };
      },
    });
  } catch (error) {
    if (!alreadyTaken(error)) throw error;
    input.note(`${input.label} already exists (422 "already taken"); reading it`);
    const found = await input.read();
    if (found !== undefined) return { resource: found, adopted: true };
    throw error;
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
