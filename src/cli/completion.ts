import type { Command } from 'commander';

/** Commands for the machine (`__complete`), not offered to people. */
const hidden = (c: Command) => (c as unknown as { _hidden?: boolean })._hidden === true;

/** The shells a completion script is written for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;

/** Every command path of the tree ('' for the program) with the words valid after it. */
function table(cmd: Command, path: string[] = [], out = new Map<string, string[]>()) {
  const words = [
    ...cmd.commands.filter((c) => !hidden(c)).map((c) => c.name()),
    ...cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)),
    '--help',
  ];
  out.set(path.join(' '), [...new Set(words)]);
  // `-o`'s values, under the command's path and `-o` (what the scripts ask after -o).
  const output = cmd.options.find((o) => o.long === '--output');
  const choices = output?.argChoices;
  if (choices) out.set([...path, '-o'].join(' '), choices);
  for (const c of cmd.commands) table(c, [...path, c.name()], out);
  return out;
}

/**
 * Where a uid (or a name) is typed, completion asks the server for names with descriptions
 * (`arbor __complete <kind>`: one page, quiet on failure): after these flags, and as the
 * argument of these commands.
 */
const NAME_FLAGS: ReadonlyArray<[readonly string[], string]> = [
  [['--parent', '--children-of', '--descendants-of', '--group'], 'groups'],
  [['--identity', '--as', '--actor'], 'identities'],
  [['--role', '--default-role'], 'roles'],
];
const verbs = (kind: string) => ['get', 'update', 'delete', 'rm'].map((v) => `${kind} ${v}`);
const NAME_ARGUMENTS: ReadonlyArray<[readonly string[], string]> = [
  [[...verbs('groups'), 'tree'], 'groups'],
  [
    [
      ...verbs('identities'),
      'identities test-token',
      ...['get', 'set', 'clear'].map((v) => `identities delegation-policy ${v}`),
    ],
    'identities',
  ],
  [verbs('roles'), 'roles'],
  [['can-i', 'who-can'], 'capabilities'],
];

/** The `case` arms of a POSIX-like shell (bash, zsh): `a|b) kind=x ;;`. */
const arms = (rows: ReadonlyArray<[readonly string[], string]>, quote: boolean) =>
  rows.map(
    ([keys, kind]) => `${keys.map((k) => (quote ? `"${k}"` : k)).join('|')}) kind=${kind} ;;`,
  );

/**
 * A completion script for the program, generated from its command tree, so a command added
 * to the program completes without touching this file. Names come with their descriptions
 * in zsh and fish; bash shows the names alone.
 * @throws Error for a shell other than bash, zsh or fish.
 */
export function completionScript(program: Command, shell: string): string {
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;
  const words = [...table(program)];
  if (shell === 'fish') return fishScript(name, fn, words);
  if (shell !== 'bash' && shell !== 'zsh') throw new Error(`no completion for shell "${shell}"`);
  const cases = words.map(([path, w]) => `    "${path}") echo "${w.join(' ')}" ;;`).join('\n');
  const wordsFn = `${fn}_words() {
  case "$1" in
${cases}
  esac
}
`;
  // The kind of name the word being completed is, from the word before it or the command.
  const kindOf = (prev: string, cur: string) => `  local kind=""
  case "${prev}" in
    ${arms(NAME_FLAGS, false).join('\n    ')}
    *) [[ "${cur}" != -* ]] && case "$cmdpath" in
      ${arms(NAME_ARGUMENTS, true).join('\n      ')}
    esac ;;
  esac`;
  if (shell === 'zsh')
    return `#compdef ${name}
# ${name} completion for zsh: eval "$(${name} completion zsh)"
${wordsFn}${fn}() {
  local cmdpath="" w i
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    [[ "$w" == -* ]] && continue
    [[ " $(${fn}_words "$cmdpath") " == *" $w "* ]] && cmdpath="\${cmdpath:+$cmdpath }$w"
  done
  case "\${words[CURRENT-1]}" in
    -o|--output) compadd -- \${=$(${fn}_words "$cmdpath -o")}; return ;;
  esac
${kindOf('${words[CURRENT-1]}', '${words[CURRENT]}')}
  if [[ -n "$kind" ]]; then
    local -a names
    # "name<TAB>description" lines; _describe wants name:description, a colon in a name escaped.
    names=("\${(@f)$(${name} __complete "$kind" 2>/dev/null)}")
    names=("\${(@)names//:/\\\\:}")
    names=("\${(@)names//$'\\t'/:}")
    _describe -t "$kind" "$kind" names
    return
  fi
  compadd -- \${=$(${fn}_words "$cmdpath")}
}
compdef ${fn} ${name}
`;
  return `# ${name} completion for bash: source <(${name} completion bash)
${wordsFn}${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    [[ " $(${fn}_words "$cmdpath") " == *" $w "* ]] && cmdpath="\${cmdpath:+$cmdpath }$w"
  done
  case "\${COMP_WORDS[COMP_CWORD-1]}" in
    -o|--output) COMPREPLY=($(compgen -W "$(${fn}_words "$cmdpath -o")" -- "$cur")); return ;;
  esac
${kindOf('${COMP_WORDS[COMP_CWORD-1]}', '$cur')}
  if [[ -n "$kind" ]]; then
    # One name a line (a name may hold a space); the descriptions after the tab are dropped.
    local IFS=$'\\n'
    COMPREPLY=($(compgen -W "$(${name} __complete "$kind" 2>/dev/null | cut -f1)" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -W "$(${fn}_words "$cmdpath")" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`;
}

/** fish: one function that answers the candidates (fish shows `name<TAB>description`). */
function fishScript(name: string, fn: string, words: [string, string[]][]): string {
  const cases = words
    .map(
      ([path, w]) => `    case '${path}'\n      printf '%s\\n' ${w.map((x) => `'${x}'`).join(' ')}`,
    )
    .join('\n');
  const fishArms = (rows: ReadonlyArray<[readonly string[], string]>) =>
    rows.map(
      ([keys, kind]) => `    case ${keys.map((k) => `'${k}'`).join(' ')}\n      set kind ${kind}`,
    );
  return `# ${name} completion for fish: ${name} completion fish | source
function ${fn}_words
  switch $argv[1]
${cases}
  end
end
function ${fn}
  set -l tokens (commandline -opc)
  set -l cur (commandline -ct)
  set -l cmdpath ''
  for w in $tokens[2..-1]
    string match -q -- '-*' $w; and continue
    if contains -- $w (${fn}_words "$cmdpath")
      set cmdpath (string trim -- "$cmdpath $w")
    end
  end
  if contains -- $tokens[-1] -o --output
    ${fn}_words "$cmdpath -o"
    return
  end
  set -l kind ''
  switch $tokens[-1]
${fishArms(NAME_FLAGS).join('\n')}
  end
  if test -z "$kind"; and not string match -q -- '-*' "$cur"
    switch $cmdpath
${fishArms(NAME_ARGUMENTS)
  .map((l) => l.replace(/^ {4}/, '      '))
  .join('\n')}
    end
  end
  if test -n "$kind"
    ${name} __complete $kind 2>/dev/null
    return
  end
  ${fn}_words "$cmdpath"
end
complete -c ${name} -f -a '(${fn})'
`;
}
