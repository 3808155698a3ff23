import type { Command } from 'commander';

/** Commands for the machine (`__complete`), not offered to people. */
const hidden = (c: Command) => (c as unknown as { _hidden?: boolean })._hidden === true;

/** Every command path of the tree ('' for the program) with the words valid after it. */
function table(cmd: Command, path: string[] = [], out = new Map<string, string[]>()) {
  const words = [
    ...cmd.commands.filter((c) => !hidden(c)).map((c) => c.name()),
    ...cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)),
    '--help',
  ];
  out.set(path.join(' '), [...new Set(words)]);
  for (const c of cmd.commands) table(c, [...path, c.name()], out);
  return out;
}

/**
 * Where a uid is typed, completion asks the server (`arbor __complete <kind>`, one page,
 * quiet on failure): after these flags, and as the argument of these commands. Only
 * groups and roles: there are few of them and they are typed often.
 */
const UID_FLAGS: ReadonlyArray<[string, string]> = [
  ['--parent|--children-of|--descendants-of|--group', 'groups'],
  ['--role|--default-role', 'roles'],
];
const UID_ARGUMENTS: ReadonlyArray<[string, string]> = [
  ['"groups get"|"groups update"|"groups delete"|"groups rm"|tree', 'groups'],
  ['"roles get"|"roles update"|"roles delete"|"roles rm"', 'roles'],
];

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
  local kind=""
  case "\${COMP_WORDS[COMP_CWORD-1]}" in
    ${UID_FLAGS.map(([flags, kind]) => `${flags}) kind=${kind} ;;`).join('\n    ')}
    *) [[ "$cur" != -* ]] && case "$path" in
      ${UID_ARGUMENTS.map(([paths, kind]) => `${paths}) kind=${kind} ;;`).join('\n      ')}
    esac ;;
  esac
  if [[ -n "$kind" ]]; then
    COMPREPLY=($(compgen -W "$(${name} __complete "$kind" 2>/dev/null)" -- "$cur"))
    return
  fi
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
