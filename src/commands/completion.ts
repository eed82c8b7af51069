/**
 * The `provider completion <shell>` core: prints the completion script of bash, zsh or fish. Each script is a
 * thin wrapper that runs `provider __complete <words…>` on every Tab and shows what it prints; what fits is
 * decided by the program itself (src/cli/complete.ts), so an installed script never goes stale after an upgrade.
 *
 * The protocol: the words after `provider` up to the cursor are its arguments, the last one the word being
 * completed (empty after a space). It prints one candidate a line, `value` or `value<TAB>description`, then
 * always a last line, the directive: `:done` (those candidates, nothing else), `:files` or `:dirs` (no
 * candidates: the shell completes file or folder names itself). The scripts call `provider` from the PATH, the
 * npm package's command.
 */
import type { RunContext } from './context.js';

/** A shell there is a script for. */
export type Shell = 'bash' | 'zsh' | 'fish';

/** What `provider completion` is asked to do: the shell. */
export interface CompletionOptions {
  shell: Shell;
}

/**
 * bash 3.2 or later (macOS's own too). bash splits words at COMP_WORDBREAKS (`=` and `:` among them), so
 * `--platform=lin` arrives as three words: they are joined again from the line as typed (words with no blank
 * between them are one), and what comes before the part readline replaces (after the last `=` or `:`) is taken
 * off each candidate again.
 */
const BASH = `# bash completion for provider. Install: add this line to ~/.bashrc
#   source <(provider completion bash)
# On every Tab it asks 'provider __complete <words...>' what fits, so it never goes stale after an upgrade.
_provider_completion() {
  local nl=$'\\n' line=\${COMP_LINE:0:COMP_POINT} blank cur text i out directive candidate
  local -a words=()
  line=\${line#*"\${COMP_WORDS[0]}"}
  for ((i = 1; i <= COMP_CWORD; i++)); do
    blank=\${line%%[![:space:]]*}
    line=\${line#"$blank"}
    if ((i == COMP_CWORD)); then
      cur=$line
    else
      cur=\${COMP_WORDS[i]}
      line=\${line#"$cur"}
    fi
    if ((i > 1)) && [[ -z $blank ]]; then
      words[\${#words[@]}-1]+=$cur
    else
      words+=("$cur")
    fi
  done
  cur=\${words[\${#words[@]}-1]}
  text=$cur
  [[ $COMP_WORDBREAKS == *=* ]] && text=\${text##*=}
  [[ $COMP_WORDBREAKS == *:* ]] && text=\${text##*:}
  out=$(provider __complete "\${words[@]}" 2>/dev/null) || return 0
  directive=\${out##*"$nl"}
  COMPREPLY=()
  case $directive in
    :files | :dirs)
      compopt -o filenames 2>/dev/null
      if [[ $directive == :dirs ]]; then directive=-d; else directive=-f; fi
      while IFS= read -r candidate; do COMPREPLY+=("$candidate"); done < <(compgen "$directive" -- "$text")
      ;;
    *)
      [[ $out == *"$nl"* ]] || return 0
      while IFS= read -r candidate; do
        candidate=\${candidate%%$'\\t'*}
        COMPREPLY+=("\${candidate#"\${cur%"$text"}"}")
      done <<<"\${out%"$nl"*}"
      ;;
  esac
  return 0
}
complete -F _provider_completion provider
`;

/**
 * zsh: autoloaded from the fpath (`#compdef`), or sourced. Its words are not split at `=`; `compset` lets
 * `_files` complete after `--flag=`.
 */
const ZSH = `#compdef provider
# zsh completion for provider. Install: save it on your fpath, then open a new shell (compinit on)
#   provider completion zsh > "\${fpath[1]}/_provider"
# or add this line to ~/.zshrc, after compinit: source <(provider completion zsh)
# On every Tab it asks 'provider __complete <words...>' what fits, so it never goes stale after an upgrade.
_provider() {
  local line value
  local -a lines candidates
  lines=("\${(@f)$(provider __complete "\${(@)words[2,CURRENT-1]}" "$PREFIX" 2>/dev/null)}")
  case \${lines[-1]} in
    :files) compset -P '*='; _files; return ;;
    :dirs) compset -P '*='; _files -/; return ;;
  esac
  for line in "\${(@)lines[1,-2]}"; do
    value=\${line%%$'\\t'*}
    candidates+=("\${value//:/\\\\:}\${line[\${#value}+1,-1]/$'\\t'/:}")
  done
  _describe -t values provider candidates
}
if [[ \${funcstack[1]} == _provider ]]; then _provider "$@"; else compdef _provider provider; fi
`;

/** fish: reads `value<TAB>description` lines itself. */
const FISH = `# fish completion for provider. Install:
#   provider completion fish > ~/.config/fish/completions/provider.fish
# On every Tab it asks 'provider __complete <words...>' what fits, so it never goes stale after an upgrade.
function __provider_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l current (commandline -ct)
    set -l lines (provider __complete $words "$current" 2>/dev/null)
    or return
    switch "$lines[-1]"
        case :files
            __fish_complete_path "$current"
        case :dirs
            __fish_complete_directories "$current"
        case '*'
            set -e lines[-1]
            for line in $lines
                printf '%s\\n' $line
            end
    end
end
complete -c provider -f -a '(__provider_complete)'
`;

/** The script of each shell. */
export const SCRIPTS: Readonly<Record<Shell, string>> = { bash: BASH, zsh: ZSH, fish: FISH };

/** Prints the script of the shell asked for (in a JSON document with `--json`). */
export function runCompletion(context: RunContext, options: CompletionOptions): Promise<number> {
  const script = SCRIPTS[options.shell];
  const { output } = context;
  if (output.json) output.resultJson({ shell: options.shell, script });
  // Line by line: a line is what the output writes, in a CI job's log too (see `jobLine`).
  else for (const line of script.trimEnd().split('\n')) output.result(line);
  return Promise.resolve(0);
}
