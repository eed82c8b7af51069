/**
 * The origin of a mirror, read through Terraform's provider registry protocol: service discovery
 * (`/.well-known/terraform.json`, whose `providers.v1` is a path relative to the document or a URL), a provider's
 * `versions`, and one `download/:os/:arch` document per platform, whose URLs may be relative to the document's
 * own URL. Every read is a GET retried by the product's one retry policy (src/net/retry.ts: 429 and 5xx,
 * `Retry-After` honoured), read under a cap counted as it streams (8 MiB) and within PROVIDER_HTTP_TIMEOUT (no
 * answer, no byte, or not whole within it: src/net/body.ts). A token is sent only when one is given, and only to
 * the origin itself (scheme, host and port: src/net/bearer.ts, as the registry client). Each link a download
 * document gives must be http or https, or the version stops before anything of it is fetched.
 */
import got, { HTTPError, RequestError, type Got } from 'got';
import type * as z from 'zod';
import { ApiError, ProviderError, UnexpectedAnswerError, VerificationError } from '../errors.js';
import { bearerFor } from '../net/bearer.js';
import { BodyTooLargeError, documentTimeouts, readCapped, timeoutReason } from '../net/body.js';
import { describeNetworkFailure } from '../net/networkFailure.js';
import { retrying, type Backoff } from '../net/retry.js';
import { webLinkKind } from '../registry/downloads.js';
import type { Output } from '../ui/output.js';
import {
  detailsSchema,
  discoverySchema,
  downloadSchema,
  versionsSchema,
  type OriginDownload,
  type OriginVersion,
} from './schemas.js';

/** A provider on the origin: `<namespace>/<type>`. */
export interface OriginProvider {
  namespace: string;
  type: string;
}

/** What reading the origin needs. */
export interface OriginOptions {
  /** The origin's base URL (`https://registry.terraform.io/`). */
  base: URL;
  output: Output;
  signal?: AbortSignal | undefined;
  /** Sent as a bearer token to the origin's host only (Terraform sends a host's credentials to its registry). */
  token?: string | undefined;
  retry?: Partial<Backoff> | undefined;
  /** Milliseconds each document has (PROVIDER_HTTP_TIMEOUT; default 60 s): src/net/body.ts's `documentTimeouts`. */
  timeoutMs?: number | undefined;
}

/** The reads of the provider registry protocol on one origin. */
export interface Origin {
  /** The host the origin is known by (`registry.terraform.io`, `127.0.0.1:8080`). */
  readonly host: string;
  versions(provider: OriginProvider): Promise<OriginVersion[]>;
  /**
   * When the origin published the version (`published_at` of its provider details); undefined when it serves no
   * details (404) or no date.
   */
  published(provider: OriginProvider, version: string): Promise<Date | undefined>;
  /** One platform's download document, its URLs absolute; undefined when the origin has no such platform (404). */
  download(
    provider: OriginProvider,
    version: string,
    platform: { os: string; arch: string },
  ): Promise<OriginDownload | undefined>;
}

const DEFAULT_HOST = 'registry.terraform.io';
/** A registry's JSON documents are small; anything larger is not one of them. */
const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/** The public registry, the origin when `--from` is not given. */
export const DEFAULT_ORIGIN = DEFAULT_HOST;

/** Builds the reader of one origin; nothing is read until a method is called. */
export function createOrigin(options: OriginOptions): Origin {
  const { base } = options;
  const host = base.host;
  options.output.addSecret(options.token);
  const client = originClient(options);
  const read = <S extends z.ZodType>(url: URL, schema: S, what: string) =>
    readDocument(client, options, url, schema, what);

  let discovered: Promise<URL> | undefined;
  /** `providers.v1`, resolved against the discovery document's URL. */
  function providersBase(): Promise<URL> {
    discovered ??= (async () => {
      const url = new URL('/.well-known/terraform.json', base);
      const doc = await read(url, discoverySchema, 'service discovery');
      if (doc === undefined) throw answerError(`${host} serves no service discovery document`, 404, url);
      const service = doc['providers.v1'];
      if (service === undefined)
        throw answerError(
          `${host} does not offer the provider registry protocol (no providers.v1)`,
          200,
          url,
        );
      const resolved = new URL(service, url);
      return resolved.pathname.endsWith('/') ? resolved : new URL(`${resolved.toString()}/`);
    })();
    return discovered;
  }

  return {
    host,
    async versions(provider) {
      const url = new URL(`${provider.namespace}/${provider.type}/versions`, await providersBase());
      const doc = await read(url, versionsSchema, `the versions of ${provider.namespace}/${provider.type}`);
      if (doc === undefined) {
        throw new ApiError(`${provider.namespace}/${provider.type} is not on ${host}`, {
          status: 404,
          hint: `Check the provider's address and --from (the origin registry, default ${DEFAULT_HOST}).`,
          details: { provider: `${provider.namespace}/${provider.type}`, origin: host },
        });
      }
      return doc.versions;
    },
    async published(provider, version) {
      const path = `${provider.namespace}/${provider.type}/${encodeURIComponent(version)}`;
      const url = new URL(path, await providersBase());
      const what = `the details of ${provider.namespace}/${provider.type} ${version}`;
      const doc = await read(url, detailsSchema, what);
      const at = doc?.published_at;
      return at === undefined || at === null ? undefined : new Date(at);
    },
    async download(provider, version, { os, arch }) {
      const path = `${provider.namespace}/${provider.type}/${version}/download/${os}/${arch}`;
      const url = new URL(path, await providersBase());
      const doc = await read(
        url,
        downloadSchema,
        `the download of ${provider.namespace}/${provider.type} ${version} ${os}_${arch}`,
      );
      if (doc === undefined) return undefined;
      // The document's URLs may be relative to the document's own URL.
      const link = (value: string, what: string): string =>
        webLink(value, url, `${provider.namespace}/${provider.type} ${version} ${os}_${arch}`, what, host);
      return {
        ...doc,
        download_url: link(doc.download_url, 'its zip'),
        shasums_url: link(doc.shasums_url, 'its SHA256SUMS'),
        shasums_signature_url: link(doc.shasums_signature_url, 'the SHA256SUMS signature'),
      };
    },
  };
}

/**
 * A link of a download document, resolved against the document's URL: http or https only. Anything else (a
 * `file:` or `data:` link, or got's UNIX socket form `http://unix:/…`) is refused before any request, naming the version, the platform and the scheme (never
 * the link, which may be a signed URL).
 */
function webLink(value: string, base: URL, label: string, what: string, host: string): string {
  const link = new URL(value, base);
  const kind = webLinkKind(link);
  if (kind === undefined) return link.toString();
  throw new VerificationError(
    `${label}: ${host} gives ${kind} for ${what}; only http and https links are fetched`,
    {
      hint: 'The origin serves a download document Terraform could not use either; nothing of the version was fetched or written.',
      details: { scheme: link.protocol },
    },
  );
}

/**
 * got for the origin: no retries of its own, the documents' timeouts, the token to the origin only (redirects
 * included), traced with --verbose.
 */
function originClient(options: OriginOptions): Got {
  const { output, signal, token } = options;
  const authorize = bearerFor(options.base.origin, token);
  return got.extend({
    headers: { accept: 'application/json', 'user-agent': 'provider-cli' },
    timeout: documentTimeouts(options.timeoutMs ?? 60_000),
    retry: { limit: 0 },
    signal,
    hooks: {
      beforeRequest: [
        (request) => {
          authorize(request.url, request.headers);
          output.debug(`→ GET ${String(request.url)}`);
        },
      ],
      beforeRedirect: [(request) => authorize(request.url, request.headers)],
    },
  });
}

/** GETs a JSON document (retried by the one policy) and parses it with `schema`; a 404 is `undefined`. */
async function readDocument<S extends z.ZodType>(
  client: Got,
  options: OriginOptions,
  url: URL,
  schema: S,
  what: string,
): Promise<z.output<S> | undefined> {
  const { output, signal } = options;
  const host = options.base.host;
  let body: string;
  try {
    body = await retrying(
      async () => (await readCapped(client.stream(url), MAX_DOCUMENT_BYTES)).toString('utf8'),
      {
        policy: options.retry,
        signal,
        interrupted: `Interrupted while reading ${what} from ${host}`,
        onRetry: ({ attempt, reason, delayMs }) =>
          output.info(
            `${host} answered ${reason} to ${what}: waiting ${Math.ceil(delayMs / 1000)} s (retry ${attempt})`,
          ),
      },
    );
  } catch (error) {
    if (error instanceof HTTPError && error.response.statusCode === 404) return undefined;
    if (error instanceof BodyTooLargeError)
      throw answerError(`${what} from ${host} is larger than a registry document (8 MiB)`, 200, url);
    throw readError(error, what, host);
  }
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    throw answerError(`${what} from ${host} is not JSON`, 200, url);
  }
  const parsed = schema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || '(document)';
    throw answerError(
      `${what} from ${host} has another shape than the protocol's: ${where}: ${issue?.message ?? ''}`,
      200,
      url,
    );
  }
  return parsed.data;
}

function answerError(message: string, status: number, url: URL): UnexpectedAnswerError {
  return new UnexpectedAnswerError(message, {
    status,
    hint: 'Check --from: it must name a registry that serves the provider registry protocol.',
    details: { url: url.toString() },
  });
}

/** An origin that refused or did not answer: exit 4, with its status or the network's reason. */
function readError(error: unknown, what: string, host: string): Error {
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    return new ApiError(`${host} answered ${status} to ${what}`, {
      status,
      hint:
        status === 401 || status === 403
          ? `The origin wants credentials: set TF_TOKEN_<host> for ${host}.`
          : 'Try again later; if it persists, check the origin registry.',
      details: { origin: host, status },
    });
  }
  if (error instanceof ProviderError) return error;
  // Read as a stream, a failure of the connection may come as Node's own error, with its code.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (error instanceof RequestError || typeof code === 'string') {
    const failure = describeNetworkFailure(error, timeoutReason(error) ?? (code as string));
    return new ApiError(`${host} could not be reached for ${what}: ${failure.reason}`, {
      status: 0,
      hint: 'Check --from and the network (a proxy, a firewall, or an air gap: then mirror with --to-dir elsewhere).',
      details: { origin: host, reason: failure.reason },
    });
  }
  return error instanceof Error ? error : new Error(String(error));
}
