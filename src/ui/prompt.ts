/**
 * Questions to the person at the terminal. Commands receive a `Confirm` function rather than calling the
 * prompt library themselves, so tests answer for the user and scripts never reach a prompt (the caller
 * decides when a terminal is there). The prompt is drawn on stderr: stdout stays for results.
 */
import { InterruptedError } from '../errors.js';

/** Asks a yes/no question; resolves to the answer. */
export type Confirm = (question: string, options?: ConfirmOptions) => Promise<boolean>;

/** How to ask. */
export interface ConfirmOptions {
  /** The answer when the user just presses Enter (default: no). */
  default?: boolean;
  signal?: AbortSignal | undefined;
}

/** Streams the prompt reads keys from and draws on. */
export interface PromptStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

/** A Confirm built on @inquirer/prompts' `confirm`, on the given streams; Ctrl-C becomes an InterruptedError. */
export function inquirerConfirm(streams: PromptStreams): Confirm {
  return async (question, options = {}) => {
    const { confirm } = await import('@inquirer/prompts');
    try {
      return await confirm(
        { message: question, default: options.default ?? false },
        {
          input: streams.input,
          output: streams.output,
          ...(options.signal ? { signal: options.signal } : {}),
        },
      );
    } catch (error) {
      const name = (error as Error | undefined)?.name;
      if (name === 'ExitPromptError' || name === 'AbortPromptError') {
        throw new InterruptedError('Interrupted at the confirmation prompt; nothing was changed');
      }
      throw error;
    }
  };
}

/** A Confirm that always gives the same answer and records the questions (for tests and `--yes`). */
export function fixedConfirm(answer: boolean): Confirm & { questions: string[] } {
  const questions: string[] = [];
  const ask = (question: string): Promise<boolean> => {
    questions.push(question);
    return Promise.resolve(answer);
  };
  return Object.assign(ask, { questions });
}
