/**
 * The JSON:API error document the platform's API answers with (`{"errors":[{status,title,detail,source}]}`;
 * some endpoints answer `{"errors":["text"]}`), read tolerantly: whatever a client receives, it gets the error
 * objects it can show, or none.
 */
import type { ErrorObject } from './api.js';

/** The error objects of a body: `{"errors":[{...}]}` or `{"errors":["text"]}`; empty when neither. */
export function readErrors(body: string): ErrorObject[] {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return [];
  }
  const errors = (doc as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.flatMap((e): ErrorObject[] => {
    if (typeof e === 'string') return [{ status: '', detail: e }];
    if (typeof e !== 'object' || e === null) return [];
    const o = e as Record<string, unknown>;
    const source = o.source as ErrorObject['source'] | undefined;
    return [
      {
        status: typeof o.status === 'number' || typeof o.status === 'string' ? o.status : '',
        ...(typeof o.title === 'string' ? { title: o.title } : {}),
        ...(typeof o.detail === 'string' ? { detail: o.detail } : {}),
        ...(source && typeof source === 'object' ? { source } : {}),
      },
    ];
  });
}
