/** `provider runtask serve`, `callback` and `send`: flags → options → the run task core. */
import type { CallbackFlags } from '../commands/runtask/callback.js';
import type { ServeFlags } from '../runtask/server/options.js';
import type { SendFlags } from '../runtask/send/options.js';
import { collect, flagsOnly, type CommandRun, type ProgramCommand } from './command.js';
import { local } from './help.js';

// The HMAC key the runtask examples share: any value works, as long as both sides have the same one.
const KEY = 'RUNTASK_HMAC_KEY=local-test-key';

const PLATFORM_HOST_HELP =
  'a platform host the access token may be sent to: host, host:port or URL (repeatable; default app.terraform.io)';

/** Registers the `runtask` command group. */
export function registerRuntask(program: ProgramCommand): void {
  const group = program
    .command('runtask')
    .description('run task integrations (integrator server, callbacks, a local platform to test one)')
    .examples(
      local({
        'an integrator whose check always passes': `${KEY} runtask serve --exec true`,
        'act as the platform against it, in another terminal': `${KEY} runtask send http://127.0.0.1:8080/ --expect passed`,
      }),
    );
  registerServe(group);
  registerCallback(group);
  registerSend(group);
}

/** `runtask serve`: the integrator. */
function registerServe(group: ProgramCommand): void {
  group
    .command('serve')
    .description('run a run task integrator: verify, answer 200, run --exec per request, report back')
    .listens('8080')
    .option('--path <path>', 'path the platform POSTs to (default: "/")')
    .option('--exec <command>', 'the check to run per request, through the shell (see docs/runtask.md)')
    .hmacKey()
    .option(
      '--routes <file>',
      'several run tasks, each with its own path, HMAC key and handler (YAML or JSON; instead of --path, --exec and the key flags)',
    )
    .option('--platform-host <host>', PLATFORM_HOST_HELP, collect)
    .option('--heartbeat <duration>', 'interval of running callbacks (under the 10-minute window)', '4m')
    .option('--timeout <duration>', 'how long a handler may run before it is killed', '50m')
    .option(
      '--result-format <format>',
      "how a handler's output is read: auto (a SARIF or JUnit report, else a JSON result, else the exit code), json, exit-code, sarif, junit",
    )
    .option(
      '--fail-on <level>',
      'with a SARIF or JUnit report: error (default), warning, note or never fails the task',
    )
    .option(
      '--with-configuration',
      "download and unpack the run's configuration version for the handler (RUNTASK_CONFIGURATION_DIR)",
    )
    .option('--max-jobs <n>', 'handlers running at once; the rest queue', '4')
    .option('--grace <duration>', 'on SIGTERM, how long running checks may finish', '30s')
    .option('--callback-timeout <duration>', 'how long a final callback is retried', '5m')
    .option(
      '--state-dir <dir>',
      'job journal (holds access tokens, mode 0600; default under the temp folder)',
    )
    .option(
      '--database-url <url>',
      'PostgreSQL job store shared by several instances (default: RUNTASK_DATABASE_URL; without one, the journal)',
    )
    .option(
      '--lease <duration>',
      "with a database: how long a dead instance's job waits to be taken over (default 60s)",
    )
    .option('--database-pool <n>', 'with a database: connections per instance (default 10)')
    .option(
      '--database-timeout <duration>',
      'with a database: how long a statement or a connection may take (default 10s)',
    )
    .option(
      '--role <role>',
      'with a database: all (accept and run, default), front (accept and queue) or worker (run queued checks)',
    )
    .runs(() => import('../commands/runtask/serve.js').then((m) => m.runServe), flagsOnly<ServeFlags>)
    .examples(
      local({
        "hold each run's lock file to the private registry (the configuration unpacked for the check)": `${KEY} runtask serve --with-configuration --exec 'provider lock check "$RUNTASK_CONFIGURATION_DIR" --format sarif'`,
        'fail any plan that deletes something (the handler reads the plan JSON file)': `${KEY} runtask serve --exec '! grep -q delete "$RUNTASK_PLAN_JSON"'`,
        'one run task per path, each with its own key and handler (docs/runtask.md, "Routes")':
          'runtask serve --routes routes.yaml',
      }),
    );
}

/** `runtask callback`: one task result callback. */
function registerCallback(group: ProgramCommand): void {
  group
    .command('callback')
    .description('send one task result callback (e.g. from a CI job)')
    .option('--status <status>', 'passed, failed or running')
    .option('--message <text>', 'short message shown on the run (up to 1000 characters)')
    .option('--result-url <url>', 'link to the details (http or https, up to 500 characters)')
    .option(
      '--outcomes <file>',
      'JSON array of outcomes {id, description, body, url, tags}, or a SARIF 2.1.0 or JUnit XML report; - reads stdin',
    )
    .option(
      '--fail-on <level>',
      'with a report and no --status: error, warning, note or never fails (default error)',
    )
    .option('--payload <file>', 'the saved run task request (callback URL, token, capabilities)')
    .option('--url <url>', 'the task_result_callback_url (token from RUNTASK_ACCESS_TOKEN)')
    .option('--platform-host <host>', PLATFORM_HOST_HELP, collect)
    .option('--timeout <duration>', 'how long to retry transient failures', '2m')
    .runs(
      () => import('../commands/runtask/callback.js').then((m) => m.runCallbackCommand),
      flagsOnly<CallbackFlags>,
    )
    .examples(
      local({
        'report a result with the request the platform sent, saved as a file':
          "runtask callback --payload request.json --status passed --message 'no resource destroyed'",
        'or with the callback URL and the token alone (from a CI job)':
          'RUNTASK_ACCESS_TOKEN=<token> runtask callback --url <callback url> --status running --message Scanning',
      }),
    );
}

/** `runtask send`: the platform's side, judging an integrator. */
function registerSend(group: ProgramCommand): void {
  group
    .command('send')
    .description(
      'act as the platform: send a signed run task request to an integrator and judge its callbacks',
    )
    .argument('<integrator-url>', 'where the integrator takes run task requests, e.g. http://127.0.0.1:8080/')
    .option('--stage <stage>', 'pre_plan, post_plan, pre_apply or post_apply', 'post_plan')
    .hmacKey()
    .option('--plan-json <file>', 'the plan JSON to serve (`terraform show -json`; default: a small plan)')
    .option(
      '--config-version <file-or-folder>',
      'the configuration version to serve: a .tar.gz, or a folder to pack (default: a tiny one)',
    )
    .option('--enforcement <level>', 'mandatory or advisory', 'mandatory')
    .option('--no-outcomes', 'do not offer outcomes (capabilities.outcomes false)')
    .option('--verification', 'send the verification request the platform sends when a run task is created')
    .option('--expect <status>', 'the result the check should reach: passed or failed')
    .option('--progress-window <duration>', 'errored without a progress update for this long', '10m')
    .option('--max-duration <duration>', 'errored when not final after this long', '60m')
    .option(
      '--report <file.html>',
      'also write the task result as the run page shows it (self-contained HTML)',
    )
    .listens('0', 'the local platform')
    .option(
      '--public-url <url>',
      'base URL the integrator reaches the platform at (default: the listen address)',
    )
    .runs(
      () => import('../commands/runtask/send.js').then((m) => m.runSend),
      ({ flags, args }: CommandRun<SendFlags>) => ({ ...flags, integratorUrl: args[0] }),
    )
    .examples(
      local({
        'judge the integrator on port 8080: it must keep the contract and pass': `${KEY} runtask send http://127.0.0.1:8080/ --expect passed`,
        'the request the platform sends when the run task is created': `${KEY} runtask send http://127.0.0.1:8080/ --verification`,
        'serve this folder as the configuration version (for serve --with-configuration)': `${KEY} runtask send http://127.0.0.1:8080/ --config-version . --expect passed`,
      }),
    );
}
