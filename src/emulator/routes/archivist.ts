/**
 * Archivist: the blob storage behind the upload and download links. No token: the signed secret in the path
 * is the credential. A PUT streams the bytes to disk and then flips the matching uploaded flag, as one change
 * of the store (bytes and flag land together, or neither). An upload link is single-use: once it has
 * delivered its file it is refused (403, like an expired one), and the stored bytes stay; reading the version
 * or platform again gives the file's state and, while the registry still waits for it, a fresh link. With
 * `--bandwidth` and `--total-bandwidth`, bodies in both directions are paced (see shaping.ts). With `ranges` on (the
 * emulator standing in for an origin's storage, as GitHub's and releases.hashicorp.com's answer ranges), a download
 * honours one byte range (206); the platform does not document ranges, so by default the whole file is sent. With package hashes on, a
 * provider binary's lock hashes (`zh:` from the bytes as they arrive, `h1:` from the stored zip) are computed
 * once its bytes are in, before the flag flips; a zip whose `h1:` cannot be computed is stored all the same,
 * without lock hashes.
 */
import { closeSync, createReadStream, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { parse as parseRange } from 'range-parser';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App } from '../app.js';
import { HttpProblem, notFound, type RequestContext, type Router } from '../http.js';
import { ARCHIVIST_PREFIX } from '../links.js';
import { packageLockHashes } from '../zipHashes.js';

function forbidden(detail: string): HttpProblem {
  return new HttpProblem(403, [{ status: '403', title: 'forbidden', detail }]);
}

function spent(): HttpProblem {
  return forbidden(
    'This upload link has already been used: it received its file. Read the version or platform again for its state.',
  );
}

/** Writes all of `chunk` at the file's current position. */
function writeAll(fd: number, chunk: Buffer): void {
  for (let done = 0; done < chunk.length;) done += writeSync(fd, chunk, done);
}

/** Closes `fd`, ignoring a failure: the file is being removed anyway. */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing to keep
  }
}

/** Registers the archivist routes. */
export function registerArchivistRoutes(router: Router, app: App): void {
  const pattern = `${ARCHIVIST_PREFIX}:secret`;

  router.on(
    'PUT',
    pattern,
    async (ctx) => {
      const grant = app.links.verify(ctx.params.secret!, app.now());
      if (!grant || grant.op !== 'put')
        throw forbidden('This link is not a valid upload link, or it has expired.');
      const found = app.store.findObject(grant.key);
      if (!found) throw notFound();
      if (found.object.spentLinks?.includes(grant.expiresAt)) throw spent();
      const target = app.store.objectPath(grant.key);
      const tmp = `${target}.${randomBytes(6).toString('hex')}.part`;
      // The SHA-256 of the bytes is needed only for a provider binary's lock hashes (`zh:`); with package hashes
      // off (the default) the bytes are not hashed at all.
      const lockHashes = app.settings.packageHashes && found.kind === 'provider-binary';
      const sha256 = lockHashes ? createHash('sha256') : undefined;
      // Each chunk is written as it arrives, synchronously: a write into the page cache takes microseconds, where
      // a write stream's thread-pool round trip per socket chunk made the emulator, not the client, the limit of
      // loopback uploads (docs/performance.md).
      const fd = openSync(tmp, 'wx');
      let closed = false;
      try {
        ctx.bytesIn = 0;
        const { shaper } = app;
        const socket = ctx.req.socket;
        await pipeline(ctx.req, async (source: AsyncIterable<Buffer>) => {
          for await (const chunk of source) {
            ctx.bytesIn = (ctx.bytesIn ?? 0) + chunk.length;
            sha256?.update(chunk);
            const wait = shaper.pacing ? shaper.delayMs(socket, chunk.length, 'up') : 0;
            if (wait > 0) await sleep(wait);
            writeAll(fd, chunk);
          }
        });
        closed = true; // a failed close releases the descriptor all the same: never close it twice
        closeSync(fd);
      } catch (error) {
        if (!closed) closeQuietly(fd);
        rmSync(tmp, { force: true });
        throw error;
      }
      const bytes = ctx.bytesIn;
      const hashes = sha256 ? await packageHashes(tmp, sha256.digest('hex')) : undefined;
      app.store.receiveObject(grant.key, tmp, () => {
        // Looked up again: the owner may have been deleted, or the link spent by a copy of this request,
        // while the bytes were arriving.
        const owner = app.store.findObject(grant.key);
        const object = owner?.object;
        if (!object) throw notFound();
        if (object.spentLinks?.includes(grant.expiresAt)) throw spent();
        const now = app.now();
        object.uploadedAt = now;
        object.flagAt = now + app.settings.flagDelayMs;
        object.bytes = bytes;
        object.spentLinks = [...(object.spentLinks ?? []), grant.expiresAt];
        if (owner.kind === 'provider-binary') {
          const platform = app.store.data.platforms.find((p) => p.id === owner.ownerId);
          if (platform && hashes) platform.lockHashes = hashes;
          else if (platform) delete platform.lockHashes;
        }
      });
      ctx.res.writeHead(200, { 'content-length': 0 }).end();
    },
    { streaming: true },
  );

  /**
   * The lock hashes of an uploaded zip, read from its part file (the store keeps files on disk); undefined when
   * its `h1:` cannot be computed (not a zip, damaged): the platform stores it anyway, as it stores any bytes.
   */
  const packageHashes = async (part: string, sha256: string) => {
    try {
      return await packageLockHashes(part, sha256);
    } catch {
      return undefined;
    }
  };

  router.on('GET', pattern, async (ctx) => {
    const grant = app.links.verify(ctx.params.secret!, app.now());
    if (!grant || grant.op !== 'get')
      throw forbidden('This link is not a valid download link, or it has expired.');
    const found = app.store.findObject(grant.key);
    if (!found || found.object.uploadedAt === null) throw notFound();
    await sendObject(app, ctx, app.store.objectPath(grant.key));
  });
}

/** A stored file as a download: whole (200), or with `ranges` on the one range asked for (206). */
async function sendObject(app: App, ctx: RequestContext, path: string): Promise<void> {
  const size = statSync(path).size;
  const range = app.settings.ranges ? byteRange(size, ctx.req.headers.range) : undefined;
  if (range === 'unsatisfiable') {
    ctx.res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
    return;
  }
  const [start, end] = range ?? [0, size - 1];
  ctx.res.writeHead(range === undefined ? 200 : 206, {
    'content-type': 'application/octet-stream',
    'content-length': Math.max(0, end - start + 1),
    ...(app.settings.ranges ? { 'accept-ranges': 'bytes' } : {}),
    ...(range === undefined ? {} : { 'content-range': `bytes ${start}-${end}/${size}` }),
  });
  const body = createReadStream(path, size === 0 ? {} : { start, end });
  if (app.shaper.pacing) await pipeline(body, app.shaper.pace(ctx.req.socket, 'down'), ctx.res);
  else await pipeline(body, ctx.res);
}

/**
 * The one byte range a Range header asks for, as a storage service that honours ranges answers it (RFC 9110
 * §14): undefined for no header, a header that does not parse, or several ranges (the whole file is sent),
 * `unsatisfiable` for a range past the end (416).
 */
function byteRange(size: number, header: string | undefined): [number, number] | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const { code, type, ranges } = parseRange(size, header);
  if (type !== 'bytes' || (code & 1) !== 0) return undefined;
  if (code === 2 && ranges.length === 0) return 'unsatisfiable';
  return ranges.length === 1 ? [ranges[0]!.start, ranges[0]!.end] : undefined;
}
