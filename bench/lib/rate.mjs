// Rates as `provider emulate --bandwidth` reads them: 25MB/s (powers of 1000), 25MiB/s (powers of 1024).
const UNITS = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/**
 * Bytes per second of `25MB/s`, `25MiB/s` or a bare number.
 * @param {string} text
 * @returns {number}
 */
export function parseRate(text) {
  const match = /^(\d+(?:\.\d+)?)\s*(?:([kmg]i?b|b)(?:\/s|ps)?)?$/i.exec(text.trim());
  if (!match) throw new Error(`not a rate: ${text}`);
  // The pattern admits only the units above.
  const unit = /** @type {keyof typeof UNITS} */ ((match[2] ?? 'b').toLowerCase());
  return Number(match[1]) * UNITS[unit];
}
