/**
 * The one normaliser for snapshots of command output: it replaces only what differs between two runs of the
 * same test (loopback ports, temp folders, timestamps, measured durations, the ids a server makes up) with
 * stable placeholders, so an inline snapshot can assert the whole message. It refuses a text holding a
 * signed archivist link: no snapshot may keep one.
 */
import * as os from 'node:os';
import * as fs from 'node:fs';

/** An archivist link's object path; after it comes the signed part, which the request log writes `[secret]`. */
const SIGNED_LINK = /_archivist\/v1\/object\/(?!\[secret\])[^\s"'\\]+/;

/**
 * Folders made by tempDir (test/helpers/tmp.ts): `<tmpdir>/provider-<file>[-<label>]-XXXXXX`. Greedy, so that a
 * label with a six-letter word of its own (`-folder-`) is not taken for the random part.
 */
function tempFolders(): RegExp {
  const roots = [...new Set([os.tmpdir(), fs.realpathSync(os.tmpdir())])].map((r) =>
    r.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  );
  return new RegExp(`(?:${roots.join('|')})/provider-[\\w.-]*-[A-Za-z0-9]{6}(?![A-Za-z0-9])`, 'g');
}

/** `text` with its run-dependent parts replaced: `127.0.0.1:<port>`, `<tmp>`, `<time>`, `<duration>`, `<kind>-<id>`. */
export function normalise(text: string): string {
  const link = SIGNED_LINK.exec(text);
  if (link) throw new Error(`a signed archivist link must not reach a snapshot: ${link[0].slice(0, 40)}…`);
  return (
    text
      .replace(/(?<![\w.])(127\.0\.0\.1|localhost|\[::1\]):\d+/g, '$1:<port>')
      .replace(tempFolders(), '<tmp>')
      .replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)\b/g, '<time>')
      // A measured duration as the CLI prints one: `in 1.2s`, `after 340ms`, `(2m 05s)`.
      .replace(/\b(in|after|took) \d+(?:\.\d+)?(?:ms|s|m \d\ds)\b/g, '$1 <duration>')
      // Ids the emulator and the platform make up (a prefix and 16 letters or digits): `provver-<id>`.
      .replace(/\b([a-z]+)-[A-Za-z0-9]{16}\b/g, '$1-<id>')
  );
}
