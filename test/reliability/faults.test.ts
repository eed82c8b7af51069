/**
 * Randomized faults, part 1 of 2 (the scenarios are split over two files so that both cores work on them).
 * Each case is one seed: see faultScenario.ts. Replay a failure with PROVIDER_SEED=<seed>.
 */
import { faultSuite } from './faultScenario.js';

faultSuite(1, 1);
