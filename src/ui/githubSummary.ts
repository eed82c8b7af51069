/**
 * GitHub Actions' job summary: Markdown appended to the file named by `$GITHUB_STEP_SUMMARY`. The variable
 * comes from the environment the command was given (never read from the process here), and the text passes
 * through the sink's redaction like everything else that leaves the program.
 */
import { appendFile } from 'node:fs/promises';
import { exitCodeFor, toErrorDocument } from '../errors.js';
import type { Output } from './output.js';

/** Appends Markdown to the step summary when running under GitHub Actions; a failure only warns. */
export async function appendStepSummary(
  output: Output,
  env: Record<string, string | undefined>,
  markdown: string,
): Promise<void> {
  const file = env.GITHUB_STEP_SUMMARY;
  if (env.GITHUB_ACTIONS !== 'true' || file === undefined || file.trim() === '') return;
  try {
    await appendFile(file, output.redact(markdown));
  } catch (error) {
    output.warn(
      `could not append the job summary to $GITHUB_STEP_SUMMARY (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/**
 * The step summary of a failed command: a heading with the exit code, then the error, its hint and the server's
 * words as an indented code block, each of their lines indented, so no text of theirs is read as Markdown.
 */
export function failureSummary(command: string, error: unknown, code = exitCodeFor(error)): string {
  const doc = toErrorDocument(error);
  const text = [`error: ${doc.message}`];
  const said = (error as { serverDetail?: unknown }).serverDetail;
  if (typeof said === 'string' && said !== '' && !doc.message.includes(said))
    text.push(`server said: ${said}`);
  if (doc.hint) text.push(`hint: ${doc.hint}`);
  return [`### ${command} failed (exit ${code})`, '', ...literalBlock(text), ''].join('\n') + '\n';
}

/**
 * Text that is not ours (a server's words, its tags) as an indented code block: each line indented four spaces,
 * so nothing in it is read as Markdown (a link, an image, a heading, HTML, a table row). Put it after a blank
 * line: an indented block cannot interrupt a paragraph.
 */
export function literalBlock(parts: readonly string[]): string[] {
  return parts.flatMap((part) => part.split(/\r\n|\r|\n/)).map((line) => `    ${line}`);
}
