import { describe, it, expect } from 'vitest';
import { DURATION_FORMS, isDuration, MAX_DURATION_MS, parseDuration } from '../../src/config/duration.js';
import { usageErrorOf } from './helpers.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['1ms', 1],
    ['30s', 30_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['2m30s', 150_000],
    ['1h0m5s', 3_605_000],
    ['1s500ms', 1_500],
    ['1h30m15s250ms', 5_415_250],
    ['0.5s', 500],
    ['1.5h', 5_400_000],
    ['1.5m', 90_000],
    ['90', 90_000],
    ['1.5', 1_500],
    ['0.25', 250],
    ['300', 300_000],
    ['0.0015s', 2],
    ['  30s  ', 30_000],
    ['596h', 596 * 3_600_000],
    ['2147483647ms', MAX_DURATION_MS],
  ])('reads %j as %d ms', (text, expected) => {
    expect(parseDuration(text, '--wait-timeout')).toBe(expected);
  });

  it.each([
    '',
    '   ',
    'abc',
    'soon',
    '-5',
    '-5s',
    '+5',
    '5x',
    '1d',
    '1w',
    '30 s',
    '1h 30m',
    '.5',
    '1.',
    '1e3',
    '0x10',
    'Infinity',
    'NaN',
    'ms',
    's',
    '1h30',
    '10M',
    '1H',
    '5sec',
    '1,5',
  ])('refuses %j, naming the option and the value', (text) => {
    const error = usageErrorOf(() => parseDuration(text, '--wait-timeout'));
    expect(error.message).toContain('--wait-timeout');
    expect(error.message).toContain(`"${text}"`);
    expect(error.hint).toBe(DURATION_FORMS);
  });

  it.each(['0', '0s', '0ms', '0.0001', '0h0m'])('refuses the zero duration %j', (text) => {
    const error = usageErrorOf(() => parseDuration(text, 'PROVIDER_WAIT_TIMEOUT'));
    expect(error.message).toBe(`PROVIDER_WAIT_TIMEOUT must be longer than zero: "${text}"`);
  });

  it.each(['597h', '2147483648ms', '99999999999'])('refuses %j as longer than a timer can wait', (text) => {
    const error = usageErrorOf(() => parseDuration(text, '--wait-timeout'));
    expect(error.message).toContain('too long');
  });

  it('shows every accepted form in the hint', () => {
    for (const form of ['500ms', '30s', '10m', '1h', '1h30m', '90', '1.5'])
      expect(DURATION_FORMS).toContain(form);
  });
});

describe('isDuration', () => {
  it.each([
    ['10m', true],
    [90, true],
    [1.5, true],
    ['nope', false],
    [0, false],
    [-1, false],
    [Number.NaN, false],
  ])('%j → %s', (value, expected) => {
    expect(isDuration(value)).toBe(expected);
  });
});
