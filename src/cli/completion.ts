/** `provider completion <shell>`: prints the shell's completion script (the core holds the three scripts). */
import { Argument } from 'commander';
import type { CompletionOptions, Shell } from '../commands/completion.js';
import type { CommandRun, ProgramCommand } from './command.js';
import { local } from './help.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const satisfies readonly Shell[];

// How to install each script, before the examples (which end every help).
const INSTALL = `
Install (once; a new shell then completes commands, flags, os_arch and files):
  bash  in ~/.bashrc: source <(provider completion bash)
  zsh   provider completion zsh > "\${fpath[1]}/_provider"   (compinit on)
  fish  provider completion fish > ~/.config/fish/completions/provider.fish
Each Tab asks the installed provider what fits (provider __complete), so the
script does not go stale after an upgrade.`;

/** Registers the command. */
export function registerCompletion(program: ProgramCommand): void {
  program
    .command('completion')
    .description('print the completion script of a shell: commands, flags, os_arch values, files')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .runs(
      () => import('../commands/completion.js').then((m) => m.runCompletion),
      ({ args }: CommandRun<object>): CompletionOptions => ({ shell: args[0] as Shell }),
    )
    .addHelpText('after', INSTALL)
    .examples(
      local({
        'the bash script (source it from ~/.bashrc)': 'completion bash',
        'the zsh script (save it as _provider on your fpath)': 'completion zsh',
        'the fish script (save it as ~/.config/fish/completions/provider.fish)': 'completion fish',
      }),
    );
}
