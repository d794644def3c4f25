import { basename } from 'node:path';
import { EXIT, FerryError } from '../errors/index.ts';
import type { Command } from './command.ts';

/**
 * The shell side of completion: it hands the words typed so far to `crm-ferry
 * --get-yargs-completions`, where yargs answers from the command table and the options of the
 * command typed. yargs writes `name:description` pairs when SHELL names zsh and bare names
 * otherwise, so each script says which shell it is. Where it answers nothing (a FILE argument, the
 * value of an option) the shell completes file names.
 */
const SCRIPTS = {
  bash: `# crm-ferry completion for bash. Install: crm-ferry completion bash >> ~/.bashrc
_crm_ferry_completions() {
  local IFS=$'\\n'
  local words
  words=$(SHELL=/bin/bash crm-ferry --get-yargs-completions "\${COMP_WORDS[@]:0:COMP_CWORD+1}" 2>/dev/null)
  COMPREPLY=($(compgen -W "\${words}" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o bashdefault -o default -F _crm_ferry_completions crm-ferry
`,
  zsh: `#compdef crm-ferry
# crm-ferry completion for zsh. Install: crm-ferry completion zsh >> ~/.zshrc
_crm_ferry_completions() {
  local -a reply
  reply=(\${(f)"$(SHELL=/bin/zsh crm-ferry --get-yargs-completions "\${(@)words[1,CURRENT]}" 2>/dev/null)"})
  # Nothing from crm-ferry (a FILE argument, the value of --out): file names.
  if (( \${#reply} )); then _describe 'crm-ferry' reply; else _files; fi
}
compdef _crm_ferry_completions crm-ferry
`,
} as const;

export const completionCommand: Command = {
  name: 'completion',
  usage: `Usage: crm-ferry completion [bash|zsh]

Prints the script that completes crm-ferry's commands and options in the shell (default: the one
SHELL names); file names where a file goes.`,
  epilog: `Add it to the shell's start-up file:
  crm-ferry completion bash >> ~/.bashrc
  crm-ferry completion zsh >> ~/.zshrc`,
  options: {},
  async run(args, io) {
    if (args.positionals.length > 1)
      throw new FerryError('USAGE', `completion takes one shell, got ${args.positionals.join(' ')}`);
    const shell = args.positionals[0] ?? (basename(io.env.SHELL ?? '') === 'zsh' ? 'zsh' : 'bash');
    if (shell !== 'bash' && shell !== 'zsh')
      throw new FerryError('USAGE', `completion knows bash and zsh, got ${JSON.stringify(shell)}`);
    io.stdout.write(SCRIPTS[shell]);
    return EXIT.OK;
  },
};
