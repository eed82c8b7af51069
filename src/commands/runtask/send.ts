/**
 * The `provider runtask send` core: flags → settings, one session against the integrator, the timeline as it
 * happens (or one JSON report at the end), then the verdict: exit 0, or the error that decides the exit code
 * (3 contract violation, 4 request not accepted, 6 timeout, 1 result other than `--expect`, 130 interrupted).
 */
import { constants } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { UsageError } from '../../errors.js';
import { sendOptionsFromFlags, type SendFlags } from '../../runtask/send/options.js';
import type { SendTuning } from '../../runtask/send/post.js';
import { reportDocument, timelineLines, verdictLines } from '../../runtask/send/render.js';
import { runSession } from '../../runtask/send/session.js';
import { decideVerdict } from '../../runtask/send/verdict.js';
import type { RunContext } from '../context.js';

/** What `runtask send` is asked to do: its flags and the `<integrator-url>` argument. */
export interface SendCommandOptions extends SendFlags {
  integratorUrl: string | undefined;
}

/** Runs `runtask send`; resolves with 0 or throws the error that carries the exit code. Tests shorten `tuning`. */
export async function runSend(
  context: RunContext,
  options: SendCommandOptions,
  tuning?: Partial<SendTuning>,
): Promise<number> {
  const { output } = context;
  const { integratorUrl, ...flags } = options;
  const { settings, expected, warnings } = await sendOptionsFromFlags(integratorUrl, flags, context);
  settings.tuning = { ...settings.tuning, ...tuning };
  output.addSecret(settings.hmacKey);
  for (const warning of warnings) output.warn(warning);
  const windows = { progressWindow: flags.progressWindow, maxDuration: flags.maxDuration };
  if (flags.report !== undefined) {
    // Checked before anything is sent: a session whose page cannot be written would lose its verdict at the end.
    const folder = path.dirname(path.resolve(context.cwd, flags.report));
    try {
      await access(folder, constants.W_OK);
    } catch {
      throw new UsageError(
        `--report ${flags.report}: the folder ${folder} does not exist or cannot be written`,
        {
          hint: 'Give --report a file in an existing folder you can write to.',
        },
      );
    }
  }
  let startedAt = Date.now();
  const record = await runSession(
    settings,
    (event) => {
      if (event.kind === 'platform') startedAt = event.at;
      if (output.json) return;
      for (const line of timelineLines(event, startedAt, windows, output.color)) output.result(line);
    },
    context.signal,
    (token) => output.addSecret(token),
  );
  record.startedAt = startedAt;
  const verdict = decideVerdict(record, expected, windows);
  if (flags.report !== undefined) {
    // Written whatever the verdict: a failed check is what a preview is most often wanted for.
    const file = path.resolve(context.cwd, flags.report);
    const { previewPage } = await import('../../runtask/send/report.js');
    await writeFile(
      file,
      output.redact(previewPage(record, verdict, windows, (text) => output.redact(text))),
    );
    output.info(`The task result as the run page shows it: ${file}`);
  }
  if (output.json) output.resultJson(reportDocument(record, verdict, settings.integratorUrl.href));
  else for (const line of verdictLines(record, verdict, output.color)) output.result(line);
  if (verdict.error !== undefined) throw verdict.error;
  return 0;
}
