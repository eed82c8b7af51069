/** `provider emulate`: flags → `runEmulator`. */
import { Option, type Command } from 'commander';
import type { ProgramHooks } from './main.js';
import { withExamples } from './help.js';
import type { EmulateFlags } from '../commands/emulate.js';

/** Registers the command. */
export function registerEmulate(program: Command, hooks: ProgramHooks): void {
  const emulate = program
    .command('emulate')
    .description('run a local emulation of the platform (registry API, uploads, consumer view)')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '0')
    .option('--data-dir <dir>', 'where state lives (default: a fresh temporary folder)')
    .option('--flag-delay <duration>', 'delay before an upload flips its uploaded flag (e.g. 500ms)')
    .option('--rate-limit <n>', 'requests per second per token before answering 429')
    .option('--faults <file.json>', 'fault rules: statuses, resets or delays on matching requests')
    .option('--request-log <file.jsonl>', 'append one JSON line per request (no tokens, no secret links)')
    .option('--strict', 'also refuse what the real registry accepts but terraform init later rejects')
    .addOption(new Option('--link-ttl <duration>', 'lifetime of upload/download links').default('25h'))
    .option('--latency <duration>', 'shape the network: delay every request by this much (e.g. 40ms)')
    .option('--bandwidth <rate>', 'shape the network: upload/download rate per connection (e.g. 25MB/s)')
    .action(
      hooks.action<EmulateFlags>(async (context, flags) => {
        const { runEmulator } = await import('../commands/emulate.js');
        return runEmulator(context, flags);
      }),
    );
  withExamples(emulate, [
    {
      what: 'the platform on port 8080: prints its URL and tokens, serves until Ctrl-C',
      args: ['emulate', '--port', '8080'],
    },
    {
      what: 'state kept across restarts, every request logged',
      args: ['emulate', '--port', '8080', '--data-dir', '.emulator', '--request-log', 'requests.jsonl'],
    },
    {
      what: 'a slow network, and flags that flip late, to rehearse CI',
      args: ['emulate', '--port', '8080', '--latency', '40ms', '--bandwidth', '25MB/s', '--flag-delay', '2s'],
    },
  ]);
}
