/**
 * Where a bearer token may go: to one origin (scheme, host and port), and nowhere else, redirects included. An
 * https origin that redirects to http on the same host, or to another host, gets its request without the token
 * (got keeps the header on a redirect to the same host and port whatever the scheme). The registry client and a
 * mirror's origin both put it in got's `beforeRequest` and `beforeRedirect` hooks.
 */

/** Sets `authorization: Bearer <token>` on a request to `origin`, and removes it from any other. */
export function bearerFor(
  origin: string,
  token: string | undefined,
): (url: URL | string | undefined, headers: Record<string, string | string[] | undefined>) => void {
  const own = new URL(origin).origin;
  return (url, headers) => {
    if (token !== undefined && url !== undefined && new URL(url).origin === own)
      headers.authorization = `Bearer ${token}`;
    else delete headers.authorization;
  };
}
