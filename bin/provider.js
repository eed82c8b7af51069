#!/usr/bin/env node
// The shim: the program is dist/bundle/provider.js, built by `npm run build` (scripts/bundle.mjs package): one
// file holding commander and the command declarations, which loads each command's core and the libraries it
// needs from dist/bundle/chunks/ when that command runs (README, "Performance").
import { main } from '../dist/bundle/provider.js';

void main();
