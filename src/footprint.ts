/**
 * V8 set for a small footprint, for the commands that stream large files (publish, verify): their work is
 * native (reading, SHA-256, the seal, the sockets), their JavaScript little per chunk, and what V8 spends memory on
 * to run JavaScript faster buys them nothing measurable. Two settings, each measured on a 13 × 128 MiB publish
 * (bench/, figure "memory"; the run's wall and CPU time did not change):
 *
 * - The young generation stays at the size it starts with. V8 allocates new objects in two semi-spaces that start
 *   at 1 MB each and double, up to 16 MB, whenever enough objects survive a collection; a publish's modules and
 *   streams made them double three times: 12 MB more resident memory (both semi-spaces are written to, in turn)
 *   for objects that mostly die young anyway. `--max-semi-space-size=1` would keep it small, but V8 reads that
 *   only when a heap is made, before any of the program runs (and an npm shim cannot pass flags to node); the
 *   growth factor is read each time the young generation grows, so setting it to 1 once the program runs stops
 *   the growth from then on, for some 30 more collections well under a millisecond each. V8 accepts a factor
 *   below 2 only at run time: its command line raises it to 2, and so does every heap made afterwards on V8 11
 *   and 12 (the flag is the process's), so a worker thread's start undoes it (`workerOnline` sets it again).
 * - No optimizing compiler: functions run as bytecode and Sparkplug's baseline code, never through Turbofan
 *   (nor Maglev, on by default from Node 24), whose compilations on background threads left 4 to 9 MB of memory
 *   behind in their allocators during the hashing and the uploads (Maglev some 1.5 MB more on Node 24).
 *
 * The emulator and the run task integrator, servers whose JavaScript is their work, keep V8's defaults. A V8
 * without one of these flags would print an error for it, so they are set only on the V8 versions they were read
 * and measured on (Node 20 to 24: V8 11 to 13). V8 keys its code cache by the flags it was made under: on Node
 * 22.8 and later, Node keeps the cache itself; before, bin/compile-cache.cjs makes the caches of the
 * files compiled before a change of flags (or a worker's start, which sets the growth factor back) just before
 * it, and files each under the flag state it was made in (its tests check that none is refused next run).
 */
import { setFlagsFromString } from 'node:v8';

/** V8 major versions known to have these flags and to honour a growth factor of 1 set at run time. */
const KNOWN_V8 = { from: 11, to: 13 };

let preferred = false;

function known(): boolean {
  const major = Number(process.versions.v8.split('.')[0]);
  return major >= KNOWN_V8.from && major <= KNOWN_V8.to;
}

/** Sets V8 for a small footprint for the rest of the process (worker threads included). */
export function preferSmallFootprint(): void {
  preferred = true;
  if (!known()) return;
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--no-turbofan');
  setFlagsFromString('--no-maglev');
}

/** To call when a worker thread is online: its heap, made meanwhile, may have set the growth factor back to 2. */
export function workerOnline(): void {
  if (preferred && known()) setFlagsFromString('--semi-space-growth-factor=1');
}
