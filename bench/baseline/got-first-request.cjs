#!/usr/bin/env node
// Runs the bundle of got-request.mjs as bin/provider.cjs runs the package: Node's compile cache on before the
// bundle loads, then one GET to the URL given. Usage: got-first-request.cjs <bundle.cjs> <url>
'use strict';
require('node:module').enableCompileCache?.();

const [bundle, url] = process.argv.slice(2);
if (!bundle || !url) throw new Error('usage: got-first-request.cjs <bundle.cjs> <url>');
require(bundle).send(url);
