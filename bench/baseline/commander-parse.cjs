// A floor of start-up (bench/figures/startup.mjs): a CommonJS script that loads commander, the argument parser
// this project uses, declares one command and parses `versions list` with it — nothing else: no settings, no
// token, no HTTP client, no request. Every command of a commander program pays at least this before it knows
// what to do.
'use strict';
const { Command } = require('commander');

const program = new Command('provider').exitOverride();
program
  .command('versions')
  .command('list')
  .option('--name <name>')
  .action(() => undefined);
program.parse(['versions', 'list', '--name', 'example'], { from: 'user' });
