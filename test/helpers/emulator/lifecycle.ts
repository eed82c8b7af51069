/** Emulators per test (started on demand, closed after each test) and the manual clock a test gives one. */
import { afterEach } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/server.js';

/** A clock the test moves by hand (milliseconds). */
export interface ManualClock {
  t: number;
  now: () => number;
  advance(ms: number): void;
}

/** A manual clock starting at a fixed instant with non-zero milliseconds. */
export function manualClock(start = 1_700_000_000_123): ManualClock {
  const clock: ManualClock = {
    t: start,
    now: () => clock.t,
    advance(ms) {
      clock.t += ms;
    },
  };
  return clock;
}

/** Starts emulators that are closed after each test of the calling file. */
export function emulatorPerTest(): (options?: EmulatorOptions) => Promise<Emulator> {
  const running: Emulator[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.close()));
  });
  return async (options = {}) => {
    const emulator = await startEmulator(options);
    running.push(emulator);
    return emulator;
  };
}
