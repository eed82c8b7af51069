/** `provider emulate`: flags → `runEmulator`. */
import { Option } from 'commander';
import type { EmulateFlags } from '../commands/emulate.js';
import { flagsOnly, type ProgramCommand } from './command.js';
import { local } from './help.js';

/** Registers the command. */
export function registerEmulate(program: ProgramCommand): void {
  program
    .command('emulate')
    .description('run a local emulation of the platform (registry API, uploads, consumer view)')
    .listens('0')
    .option('--data-dir <dir>', 'where state lives (default: a fresh temporary folder)')
    .option('--flag-delay <duration>', 'delay before an upload flips its uploaded flag (e.g. 500ms)')
    .option('--rate-limit <n>', 'requests per second per token before answering 429')
    .option('--faults <file.json>', 'fault rules: statuses, resets or delays on matching requests')
    .option('--request-log <file.jsonl>', 'append one JSON line per request (no tokens, no secret links)')
    .option('--strict', 'also refuse what the real registry accepts but terraform init later rejects')
    .option(
      '--package-hashes',
      "serve every platform's lock hashes (packages) in the download response, as OpenTofu's registry does",
    )
    .option(
      '--ranges',
      'answer byte ranges of downloads (206), as an origin’s storage does, for `provider mirror` to stream from',
    )
    .addOption(new Option('--link-ttl <duration>', 'lifetime of upload/download links').default('25h'))
    .option('--latency <duration>', 'shape the network: delay every request by this much (e.g. 40ms)')
    .option('--bandwidth <rate>', 'shape the network: upload/download rate per connection (e.g. 25MB/s)')
    .option(
      '--total-bandwidth <rate>',
      'shape the network: upload/download rate shared by all connections, each way (e.g. 50MB/s)',
    )
    .runs(() => import('../commands/emulate.js').then((m) => m.runEmulator), flagsOnly<EmulateFlags>)
    .examples(
      local({
        'the platform on port 8080: prints its URL and tokens, serves until Ctrl-C': 'emulate --port 8080',
        "state kept across restarts, every request logged, each platform's lock hashes served (packages)":
          'emulate --port 8080 --data-dir .emulator --request-log requests.jsonl --package-hashes',
        'a slow network, and flags that flip late, to rehearse CI':
          'emulate --port 8080 --latency 40ms --bandwidth 25MB/s --flag-delay 2s',
      }),
    );
}
