/**
 * The contents of a zip's planned entries, taken in as one read of the file passes: each entry's bytes into its
 * SHA-256 (stored data as it is, deflated data through zlib's inflater), its size and CRC-32 checked as Go's
 * archive/zip checks them (the CRC costs a tenth of the hashing). The inflating runs on Node's zlib thread pool,
 * while the main thread hashes.
 */
import { createHash, type Hash } from 'node:crypto';
import { crc32, createInflateRaw, type InflateRaw } from 'node:zlib';
import { hashedLater, type PlannedEntry, type ZipPlan } from '../zipPlan.js';

/** The inflaters' output buffers of the reads that upload (see the constructor). */
export const STREAMED_INFLATE_CHUNK = 128 * 1024;

/** One entry's content as it is read: its hash so far, CRC-32, size, inflater, and what is wrong with it. */
interface Flow {
  entry: PlannedEntry;
  /** None for a stored entry whose SHA-256 is left for later. */
  hash: Hash | undefined;
  crc: number;
  size: number;
  inflater?: InflateRaw;
  ended?: Promise<void>;
  failure?: string;
}

/** The planned entries of one file being read; `finish` gives their hashes, or the first entry that is wrong. */
export class EntryContents {
  private readonly flows: Flow[];

  /**
   * With `storedLater`, the stored entries `hashedLater` picks are only checked, not hashed. `inflateChunk`: the
   * size of the inflaters' output buffers: 1 MiB for the verification's reads (a few files at once, fewer
   * callbacks), `STREAMED_INFLATE_CHUNK` for the reads that upload (as many at once as uploads; 16 MB less peak RSS
   * publishing 13 zips at once).
   */
  constructor(
    plan: ZipPlan,
    storedLater: boolean,
    private readonly inflateChunk = 1024 * 1024,
  ) {
    this.flows = plan.map((entry) => ({
      entry,
      hash: storedLater && hashedLater(entry) ? undefined : createHash('sha256'),
      crc: 0,
      size: 0,
    }));
  }

  /**
   * Takes in `data`, bytes of the data of the entry at `index`. The caller's buffer is read into again once this
   * returns: a deflated entry's chunk is waited on until the inflater has taken it in (the write's callback),
   * rather than handed over as a copy, garbage once inflated.
   */
  async feed(index: number, data: Buffer): Promise<void> {
    const flow = this.flows[index]!;
    if (flow.entry.method === 0) return this.take(flow, data);
    const inflater = flow.inflater ?? this.startInflater(flow);
    if (flow.failure !== undefined || inflater.destroyed) return;
    // 'close' ends the wait too (the inflater failed or was stopped); the listener goes once either fires, or
    // listeners would pile up.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        inflater.off('close', done);
        resolve();
      };
      inflater.on('close', done);
      inflater.write(data, done);
    });
  }

  /** The read failed: stops the inflaters. */
  abandon(): void {
    for (const flow of this.flows) flow.inflater?.destroy();
  }

  /**
   * Every entry's content SHA-256 (lower-case hex; `''` for one left for later), or the first entry whose
   * content is wrong (damaged deflate data, another size or CRC-32 than the directory says) and why.
   */
  async finish(): Promise<{ entries: string[] } | { entry: string; failure: string }> {
    const entries: string[] = [];
    for (const flow of this.flows) {
      // A deflate entry with no data at all is no deflate stream: Go's flate reader fails, and so does zlib here.
      if (flow.entry.method === 8 && flow.inflater === undefined && flow.failure === undefined)
        this.startInflater(flow);
      if (flow.inflater !== undefined) {
        flow.inflater.end();
        await flow.ended;
      }
      const { entry } = flow;
      if (flow.failure === undefined && flow.size !== entry.uncompressedSize)
        flow.failure = `its content is ${flow.size} bytes, not the ${entry.uncompressedSize} the directory says`;
      // As Go's archive/zip: a CRC-32 of 0 in the directory means "not set" unless a data descriptor follows.
      const crcSet = entry.crc32 !== 0 || entry.dataDescriptor;
      if (flow.failure === undefined && crcSet && flow.crc >>> 0 !== entry.crc32 >>> 0)
        flow.failure = 'its content does not match its CRC-32';
      if (flow.failure !== undefined) return { entry: entry.name, failure: flow.failure };
      entries.push(flow.hash?.digest('hex') ?? '');
    }
    return { entries };
  }

  /** Content bytes of an entry (stored, or inflated): into its hash, CRC-32 and size. */
  private take(flow: Flow, data: Buffer): void {
    flow.hash?.update(data);
    flow.crc = crc32(data, flow.crc);
    flow.size += data.length;
    if (flow.size > flow.entry.uncompressedSize && flow.failure === undefined) {
      flow.failure = `its content is longer than the ${flow.entry.uncompressedSize} bytes the directory says`;
      flow.inflater?.destroy();
    }
  }

  private startInflater(flow: Flow): InflateRaw {
    const inflater = createInflateRaw({ chunkSize: this.inflateChunk });
    flow.inflater = inflater;
    inflater.on('data', (data: Buffer) => this.take(flow, data));
    flow.ended = new Promise((resolve) => {
      inflater.on('end', resolve);
      inflater.on('close', resolve);
      inflater.on('error', (error: Error) => {
        flow.failure ??= `its deflate data is damaged (${error.message})`;
        resolve();
      });
    });
    return inflater;
  }
}

/** Feeds a chunk's slices to their entries, one after another (each waits for its inflater). */
export async function feed(contents: EntryContents, slices: [number, Buffer][]): Promise<void> {
  for (const [index, slice] of slices) await contents.feed(index, slice);
}
