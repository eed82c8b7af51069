/**
 * V8's young generation, kept at the size it starts with for commands that stream large files.
 *
 * V8 allocates new objects in a young generation of two semi-spaces that starts at 1 MB each and doubles, up to
 * 16 MB, whenever enough objects survive its collections. A publish's start-up (its modules) and the streams of
 * its uploads make it double three times: 14 MB more resident memory (both semi-spaces are written to, in turn)
 * than the 2 MB it started with, for objects that mostly die young anyway. `--max-semi-space-size=1` would keep
 * it small, but V8 reads that flag only when a heap is made, before any of the program runs (and an npm shim
 * cannot pass flags to node); the growth factor is read each time the young generation grows, so setting it to 1
 * once the program runs stops the growth from then on. The cost is more, smaller collections (some 30 more in a
 * 13 × 128 MiB publish, each well under a millisecond). Servers (the emulator, the run task integrator) keep
 * V8's default, which suits throughput.
 *
 * V8 accepts a growth factor below 2 only at run time: its command line raises it to 2, and so does every heap
 * made afterwards (the flag is the process's), so a worker thread's start undoes it (`workerOnline` sets it
 * again). A V8 without the flag would print an error for it, so it is set only on the V8 versions it was read or
 * measured on (Node 20 to 24: V8 11 to 13; bench/).
 */
import { setFlagsFromString } from 'node:v8';

/** V8 major versions known to have `--semi-space-growth-factor` and to honour 1 when it is set at run time. */
const KNOWN_V8 = { from: 11, to: 13 };

let kept = false;

function apply(): void {
  const major = Number(process.versions.v8.split('.')[0]);
  if (major >= KNOWN_V8.from && major <= KNOWN_V8.to) setFlagsFromString('--semi-space-growth-factor=1');
}

/** Stops V8's young generation from growing for the rest of the process (worker threads included). */
export function keepYoungGenerationSmall(): void {
  kept = true;
  apply();
}

/** To call when a worker thread is online: its heap, made meanwhile, set the growth factor back to 2. */
export function workerOnline(): void {
  if (kept) apply();
}
