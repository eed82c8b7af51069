/** Archivist links: uploading and downloading through them as a publisher and a consumer do, and reading one. */
import { str } from '../json.js';
import { call, type Reply } from './http.js';

/** PUT bytes to an archivist link exactly as a publisher does: octet-stream, a Content-Length, no token. */
export function upload(link: string, bytes: Uint8Array): Promise<Reply> {
  return call('', 'PUT', link, { body: bytes, headers: { 'content-type': 'application/octet-stream' } });
}

/** GET an archivist link without a token. */
export function download(link: string): Promise<Reply> {
  return call('', 'GET', link, { headers: { accept: '*/*' } });
}

/** The link named `name` in a document's `data.links`. */
export function linkOf(document: unknown, name: string): string {
  return str(document, `data.links.${name}`);
}
