/**
 * Where the fixes of rejected rows go, said alike by validate and by import and run (they said
 * different things): in the input or the mapping, then the same command again; or in the rejects
 * file, given back (validate reads it as --input, import and run take it with --retry-rejects
 * FILE, as Data Loader users feed back its error file). Both ways work with every command.
 */
export function fixInInput(rejected: number): string {
  return `fix ${rejected === 1 ? 'it' : 'them'} in the input or the mapping (the rejects files say why), then run the same command again`;
}

/** The other way: the rejects file, fixed and fed back. */
export function fixInRejectsFile(rejected: number): string {
  return `or fix ${rejected === 1 ? 'it' : 'them'} in the rejects file and give it back (\`validate --input FILE\` checks it, \`import\` or \`run\` with --retry-rejects FILE writes its rows)`;
}
