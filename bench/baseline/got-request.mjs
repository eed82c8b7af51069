// The source of a floor of "start-up to the first API request" (bench/figures/startup.mjs): got, the HTTP client
// this project uses, and one GET. The figure bundles it into one CommonJS file as scripts/bundle.mjs bundles the
// package, and got-first-request.cjs runs it with Node's compile cache: every program that sends its first
// request with got pays at least this.
import got from 'got';

/**
 * Sends one GET to `url`; its answer does not matter.
 * @param {string} url
 */
export function send(url) {
  got(url, { retry: { limit: 0 }, throwHttpErrors: false }).then(
    () => undefined,
    () => undefined,
  );
}
