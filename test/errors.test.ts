/**
 * The error kinds (src/errors.ts): each keeps its class name, its stable `--json` code, its hint, details and
 * cause, and the exit code `exitCodeFor` gives it; an ApiError's status and the server's words come along.
 */
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ConflictError,
  InterruptedError,
  ProviderError,
  ResultMismatchError,
  TimeoutError,
  UnexpectedAnswerError,
  UsageError,
  VerificationError,
  exitCodeFor,
  toErrorDocument,
} from '../src/errors.js';

describe('the error kinds', () => {
  const cause = new Error('below');
  const options = { hint: 'do this', details: { file: 'x' }, cause };
  it.each([
    [new UsageError('m', options), 'UsageError', 'usage', 2],
    [new VerificationError('m', options), 'VerificationError', 'verification', 3],
    [new ApiError('m', { ...options, status: 404 }), 'ApiError', 'api', 4],
    [new UnexpectedAnswerError('m', { ...options, status: 200 }), 'UnexpectedAnswerError', 'api', 4],
    [new ConflictError('m', options), 'ConflictError', 'conflict', 5],
    [new TimeoutError('m', options), 'TimeoutError', 'timeout', 6],
    [new ResultMismatchError('m', options), 'ResultMismatchError', 'unexpected-result', 1],
    [new InterruptedError('m', options), 'InterruptedError', 'interrupted', 130],
  ] as const)('%s: name, code, hint, details, cause, exit code', (error, name, code, exit) => {
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.cause).toBe(cause);
    expect(exitCodeFor(error)).toBe(exit);
    expect(toErrorDocument(error)).toEqual({ code, message: 'm', hint: 'do this', details: { file: 'x' } });
  });

  it('an ApiError keeps its status and the server’s words', () => {
    const error = new ApiError('refused', { status: 422, serverDetail: 'no' });
    expect([error.status, error.serverDetail, error.hint, error.details]).toEqual([
      422,
      'no',
      undefined,
      undefined,
    ]);
    expect(new UsageError('m')).not.toHaveProperty('cause');
  });
});
