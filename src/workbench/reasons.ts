/**
 * The words the workbench adds to the reasons it shows. A reject's or a warning's reason itself is
 * said by reasonText (src/mapping/reasons.ts), as in every file and summary crm-ferry writes: the
 * preview, the Check view and the rejects file read the same sentence.
 */

const WARNING_WORDS: Record<string, string> = {
  VALUE_DROPPED: 'value left out',
  VALUE_KEPT: 'value kept as typed',
  LINK_UNRESOLVED: 'link not made',
  LINK_BY_NAME: 'linked by name instead',
  USER_UNKNOWN: 'owner not in the account',
  DUPLICATE_MERGED: 'rows merged',
  DUPLICATE_DROPPED: 'later rows left out',
  NOT_CARRIED: 'not carried',
};

/** A warning code as the page names its kind. */
export function warningKind(code: string): string {
  return WARNING_WORDS[code] ?? code;
}

/** A row folded into an earlier row of its record (`onDuplicate: first` or `merge`). */
export function foldedText(into: string): string {
  return `the same record as the row with key '${into}': folded into it`;
}

/** A link the preview could not check: the step it names is not at hand. */
export function uncheckedLinkText(step: string, why: string): string {
  return `link to step ${step} not checked: ${why}`;
}

/** A run's id as the state folder names it (`20261129T041000123Z-4242-1`, `rollback-…`). */
const RUN_ID = String.raw`(?:rollback-)?\d{8}T\d{6,9}Z-\d+-\d+`;

/** What rows with the same key do, in the words of the Map view's list. */
const DUPLICATE_WORDS: Record<string, string> = {
  reject: 'later rows with the same key are rejected',
  first: 'the first row with a key is kept',
  merge: 'rows with the same key are merged into the first',
  separate: 'rows with the same key each become a record',
};

const ENTITY_WORDS: Record<string, string> = {
  parties: 'people and organisations',
  kases: 'cases',
  opportunities: 'opportunities',
};

/**
 * The page's words for what the engine says in the words of the mapping file and the command line:
 * the place of a rule (`fields[4].value.transform[1]`), option names (`onDuplicate: merge`), flags
 * and commands (`--retry-rejects`, `validate --input FILE`), run ids and the service's name for a
 * custom field's entity. The data owner reads the page and edits neither the YAML's paths nor a
 * command: what they would do is said in the page's own words (the Map view's lists, the Run
 * view's buttons). Applied where the server answers the page, so every view gets it.
 */
export function forPage(text: string): string {
  return text
    .split('\n')
    .map(lineForPage)
    .filter((line, index) => line !== '' || index === 0)
    .join('\n');
}

function lineForPage(line: string): string {
  const indent = /^\s*/.exec(line)?.[0] ?? '';
  let out = line
    .slice(indent.length)
    // The place of a rule: at the start of a message it says where, elsewhere it is named in words.
    .replace(/^(?:fields|key|match|skip)(?:\[\d+\]|\.[\w*]+)*(?: \(`[^`]*`\))?: /gm, '')
    .replace(/ \((?:fields|key|match|skip)(?:\[\d+\]|\.[\w*]+)+\)/g, '')
    .replace(/\b(?:fields|match|skip)(?:\[\d+\]|\.[\w*]+)+/g, 'a rule of the mapping')
    .replace(
      /\bonDuplicate: ?`?(\w+)`?/g,
      (all, value: string) => DUPLICATE_WORDS[value] ?? 'what rows with the same key do',
    )
    .replace(/\bonInvalid: ?`?(\w+)`?/g, 'what a bad value does')
    .replace(/\bonUnknown: ?`?(\w+)`?/g, 'what an unknown name does')
    .replace(/ \(onUnknown: \w+\)/g, '')
    // A custom field of the service's entity: `unknown custom field X without a data tag of parties`.
    .replace(
      / without a data tag of (parties|kases|opportunities)\b/g,
      (_all, entity: string) => ` of ${ENTITY_WORDS[entity] ?? entity}`,
    )
    .replace(
      / (in data tag [^ ]+) of (parties|kases|opportunities)\b/g,
      (_all, tag: string, entity: string) => ` of ${ENTITY_WORDS[entity] ?? entity} ${tag}`,
    )
    .replace(
      /\b(custom fields?) of (parties|kases|opportunities)\b/g,
      (_all, what: string, entity: string) => `${what} of ${ENTITY_WORDS[entity] ?? entity}`,
    )
    .replace(
      /\((parties|kases|opportunities)(, [^)]*)?\)/g,
      (_all, entity: string, more: string | undefined) => `(${ENTITY_WORDS[entity] ?? entity}${more ?? ''})`,
    )
    .replace(new RegExp(String.raw`\bruns? ${RUN_ID}(?:, ${RUN_ID})*`, 'g'), (all) =>
      all.includes(',') ? 'those runs' : 'the run',
    )
    .replace(new RegExp(RUN_ID, 'g'), 'a run');
  // A clause that tells the reader to type a command or a flag: the page has buttons for it instead.
  out = out
    .split(/(?<=[.;])\s+/)
    .map((clause) => clause.replace(/ ?\([^()]*(?:--[a-z]|`crm-ferry|crm-ferry \w)[^()]*\)/g, ''))
    .filter(
      (clause) => !/(?:^|[\s`(])--[a-z][\w-]*|`[^`]*\b(?:crm-ferry|validate|import|run|rollback) [^`]*`/.test(clause),
    )
    .join(' ')
    .replace(/`([^`]*)`/g, '$1')
    .trim();
  return out === '' ? '' : `${indent}${out.replace(/[;,]$/, '.')}`;
}
