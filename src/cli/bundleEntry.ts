/** The one-file CLI's entry (scripts/bundle.mjs cli → build/provider.cjs, the single executable's script). */
import { main } from './main.js';

void main();
