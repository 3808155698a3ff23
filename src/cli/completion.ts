import type { Command } from 'commander';

/** Every command path of the tree ('' for the program) with the words valid after it. */
function table(cmd: Command, path: string[] = [], out = new Map<string, string[]>()) {
  const words = [
    ...cmd.commands.map((c) => c.name()),
    ...cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)),
    '--help',
  ];
  out.set(path.join(' '), [...new Set(words)]);
  for (const c of cmd.commands) table(c, [...path, c.name()], out);
  return out;
}

/**
 * A bash completion script for the program, generated from its command tree, so a command
 * added to the program completes without touching this file. zsh runs the same script
 * through `bashcompinit`.
 * @throws Error for a shell other than bash or zsh.
 */
export function completionScript(program: Command, shell: string): string {
  if (shell !== 'bash' && shell !== 'zsh') throw new Error(`no completion for shell "${shell}"`);
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  const cases = [...table(program)]
    .map(([path, words]) => `    "${path}") echo "${words.join(' ')}" ;;`)
    .join('\n');
  const bash = `${fn}_words() {
  case "$1" in
${cases}
  esac
}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    [[ " $(${fn}_words "$path") " == *" $w "* ]] && path="\${path:+$path }$w"
  done
  COMPREPLY=($(compgen -W "$(${fn}_words "$path")" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`;
  const head =
    shell === 'zsh'
      ? `# ${name} completion for zsh: eval "$(${name} completion zsh)"\nautoload -U +X bashcompinit && bashcompinit\n`
      : `# ${name} completion for bash: source <(${name} completion bash)\n`;
  return head + bash;
}
