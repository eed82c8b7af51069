/** The GitHub Action bundle's entry (scripts/bundle.mjs action → action/main.cjs): runs the action. */
import { actionMain } from './action.js';

void actionMain();
