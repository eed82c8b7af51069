#!/usr/bin/env node
// Tiny shim: everything lives in the compiled program.
import('../dist/cli/main.js').then((m) => m.main());
