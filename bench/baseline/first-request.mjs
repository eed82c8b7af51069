#!/usr/bin/env node
// The floor of "start-up to the first API request" (bench/figures/startup.mjs): an ES module that loads
// node:http and sends one GET to the URL it is given, and nothing else — no arguments parsed, no settings or
// token read, no HTTP client library. No program that does those things can send its first request sooner.
import { get } from 'node:http';

const url = process.argv[2];
if (!url) throw new Error('usage: first-request.mjs <url>');
get(url, (response) => response.resume());
