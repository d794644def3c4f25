/**
 * Compiles the field entries of a mapping into the code that builds a record from a row: one
 * emitter per kind of target (plain values, links, names, tags, contact and custom item lists).
 * Kept as one piece (about 790 lines, with the attachment entries): the emitters share the Draft, the RecordLists and the
 * FieldContext they write into, and read best side by side; what the generated code calls on each
 * value lives in field-values.ts.
 */
import { basename, isAbsolute, resolve } from 'node:path';
import { literal } from './codegen.ts';
import { ENTITY_PLURAL, KEEPABLE_KINDS, WEBSITE_SERVICES } from './compile-targets.ts';
import { normalizeTransform } from './compile-transforms.ts';
import type { TargetInfo } from './compile-targets.ts';
import { dateText, isEmpty, isTemplate, parseTemplate, trimText, valueText } from './compile-template.ts';
import { emitKeyTemplate, emitValue, nonEmpty, numberedColumn, RowRejection, textOf } from './compile-value.ts';
import type { ValueCompiler } from './compile-value.ts';
import type { Entity, FieldEntry, OnInvalid, ValueSpec } from './schema.ts';
import { TRANSFORMS } from './transforms/index.ts';
import type { Value } from './transforms/types.ts';
import type { AttachmentUse, NameKind, NameUse, RefUse, RowWarning } from './types.ts';
import {
  contactItems,
  customItems,
  itemText,
  ITEM_SHAPES,
  parseItemList,
  refused,
  shown,
  toDate,
  toId,
  toInteger,
  toNumber,
  toTime,
  toTimestamp,
} from './field-values.ts';

/** Names whose id the service takes as a bare integer rather than {id}. */
const BARE_ID_KINDS: ReadonlySet<NameKind> = new Set<NameKind>(['activityType', 'stage']);
/** Names the service takes as the account's text for them (the resolver writes its spelling), not an id. */
export const NAME_VALUED_KINDS: ReadonlySet<NameKind> = new Set<NameKind>(['lostReason']);

/** A record being built from one row. */
export interface Draft {
  /** The row's key, once made; null before (and for a row without one). */
  key: string | null;
  record: Record<string, unknown>;
  names: NameUse[];
  refs: RefUse[];
  attachments: AttachmentUse[];
  /** The record's tags, names as first spelled, duplicates (in any case) merged; null until a tag is seen. */
  tags: Array<{ name: string }> | null;
  milestone: NameUse | null;
  pipeline: string | null;
  amount: number | null;
  currency: string | null;
  /** Folder of the input file, for attachment paths. */
  /** The folder relative attachment paths are read from: the input file's; null for a live source (no folder). */
  inputDir: string | null;
  /** What the record goes without or carries as typed (onInvalid); null until the first. */
  warnings: RowWarning[] | null;
}

/** Lists of the record that entries add to. */
type ListKey = 'fields' | 'phoneNumbers' | 'emailAddresses' | 'websites' | 'addresses';

/**
 * The record's lists the mapping writes. Each is a local variable of the generated function,
 * null until an entry adds to it; the variables are declared before the first field.
 */
export class RecordLists {
  private readonly used = new Set<ListKey>();

  /** The variable of a list: null until `add`'s code first adds to it. */
  use(key: ListKey): string {
    this.used.add(key);
    return `list_${key}`;
  }

  /**
   * The statement that adds an entry (an expression, evaluated once) to a list, making the list
   * with it and putting it in the record on first use: an empty list would be given room for
   * sixteen entries.
   */
  add(key: ListKey, entry: string): string {
    const list = this.use(key);
    return `if (${list} === null) { ${list} = [${entry}]; record.${key} = ${list}; } else ${list}.push(${entry});`;
  }

  /** Declarations of the lists' variables, for the top of the function. */
  declarations(): string[] {
    return [...this.used].map((key) => `let list_${key} = null;`);
  }
}

/** Each non-empty item of a value that may be a list (after `split`). */
// Hot path (once per value per row): plain loops, no callbacks. Under tsx every function created
// at run time is also named through Object.defineProperty, which costs more than the work here.
function items(value: Value): string[] {
  if (Array.isArray(value)) {
    const out: string[] = [];
    for (const v of value) {
      const text = v.trim();
      if (text !== '') out.push(text);
    }
    return out;
  }
  const text = valueText(value).trim();
  return text === '' ? [] : [text];
}

/** Whether two texts of the same length are equal but for case; ASCII is compared without copies. */
function sameWithoutCase(a: string, b: string): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 128 || y >= 128) return a.toLowerCase() === b.toLowerCase();
    // ASCII letters differ in case by 32 (the 0x20 bit) and nothing else does.
    if ((x | 32) !== (y | 32) || (x | 32) < 97 || (x | 32) > 122) return false;
  }
  return true;
}

/**
 * Adds a tag unless the row has it already (in any case). Lists of tags are short: a linear
 * search beats a Map per row, and only names of the same length are compared without case.
 */
function addTag(draft: Draft, name: string): void {
  const tags = draft.tags;
  if (tags === null) {
    draft.tags = [{ name }];
    return;
  }
  for (const { name: known } of tags) if (known.length === name.length && sameWithoutCase(known, name)) return;
  tags.push({ name });
}

/** A name use shared by many records: frozen, so that a consumer that tries to change one fails loudly. */
function frozenUse(use: NameUse): NameUse {
  Object.freeze(use.path);
  return Object.freeze(use);
}

/**
 * How a custom field's value is checked against the field once its definition is known (see
 * resolveRecord): the field's `onInvalid` (`keep` drops, the service taking no value as typed
 * there) and the column the value comes from.
 */
function customCheck(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
): Pick<NameUse, 'onInvalid' | 'valueColumn'> {
  const { policy } = invalidPolicy(field, info, context.onInvalid);
  const column = fieldColumn(field);
  return {
    onInvalid: policy === 'reject' ? 'reject' : 'drop',
    ...(column === undefined ? {} : { valueColumn: column }),
  };
}

function customValue(value: Value): string | boolean {
  if (typeof value === 'boolean') return value;
  if (value instanceof Date) return dateText(value);
  return valueText(value);
}

function listOf(draft: Draft, key: string): Array<Record<string, unknown>> {
  let list = draft.record[key] as Array<Record<string, unknown>> | undefined;
  if (!list) {
    list = [];
    draft.record[key] = list;
  }
  return list;
}

/** Adds every tag a value gives (text, or a list after `split`). */
function addTags(draft: Draft, value: Value): void {
  if (typeof value === 'string') {
    addTag(draft, trimText(value));
    return;
  }
  if (Array.isArray(value)) {
    // After `split`: walked in place rather than copied through items() first.
    for (const item of value) {
      const name = trimText(item);
      if (name !== '') addTag(draft, name);
    }
    return;
  }
  for (const name of items(value)) addTag(draft, name);
}

/** What the code of one field entry needs besides the entry. */
export interface FieldContext {
  compiler: ValueCompiler;
  lists: RecordLists;
  entity: Entity;
  /** The mapping's `onInvalid`, for fields that do not say. */
  onInvalid: OnInvalid;
}

/** The value of a spec when it is the same for every row (a constant without `when`), else undefined. */
function constantOf(spec: ValueSpec | undefined): { value: Value } | undefined {
  if (spec === undefined) return undefined;
  if (spec === null || typeof spec === 'number' || typeof spec === 'boolean') return { value: spec };
  if (typeof spec === 'string') return isTemplate(spec) ? undefined : { value: spec };
  return undefined;
}

/** A `type` written as a constant: its text (undefined when blank), known while compiling. */
function constantType(spec: ValueSpec | undefined): { text: string | undefined } | undefined {
  if (spec === undefined) return { text: undefined };
  const constant = constantOf(spec);
  if (constant === undefined) return undefined;
  return { text: isEmpty(constant.value) ? undefined : valueText(constant.value).trim() };
}

/**
 * The field's policy for a value it cannot take, and the entry to compile. A field's own `keep`
 * on a target that cannot hold text as typed is refused when the mapping is loaded; the mapping's
 * `keep` means drop there. The phone transform's older `invalid: keep` is an alias of
 * `onInvalid: keep` on its field (with the warning that goes with it).
 */
export function invalidPolicy(
  field: FieldEntry,
  info: TargetInfo,
  fallback: OnInvalid,
): { entry: FieldEntry; policy: OnInvalid } {
  const keepable = KEEPABLE_KINDS.has(info.kind);
  if (field.onInvalid !== undefined) return { entry: field, policy: field.onInvalid };
  const spec = field.value;
  if (keepable && spec !== null && typeof spec === 'object' && spec.transform !== undefined) {
    let aliased = false;
    const transform = spec.transform.map((t) => {
      const normalized = normalizeTransform(t, TRANSFORMS);
      if (
        !normalized.ok ||
        normalized.definition !== TRANSFORMS.phone ||
        (normalized.options as { invalid?: string }).invalid !== 'keep'
      )
        return t;
      aliased = true;
      return { phone: { ...(normalized.options as object), invalid: 'error' } };
    });
    if (aliased) return { entry: { ...field, value: { ...spec, transform } }, policy: 'keep' };
  }
  return { entry: field, policy: fallback === 'keep' && !keepable ? 'drop' : fallback };
}

/** Adds a warning to the record being built. */
function warn(draft: Draft, warning: RowWarning): void {
  if (draft.warnings === null) draft.warnings = [warning];
  else draft.warnings.push(warning);
}

/** The text of a value for a warning, or undefined for none. */
function shownValue(value: Value | undefined): string | undefined {
  return value === undefined || isEmpty(value) ? undefined : valueText(value).trim();
}

/**
 * What a failing field does under `drop` or `keep`: true when the value as read is to be written
 * as typed, false when the field is left out; a warning says which. Rejections that are not
 * about a value (`required`) and bugs are thrown on.
 */
function invalidHandler(
  to: string,
  policy: 'drop' | 'keep',
  yamlPath: string,
  column: string | undefined,
): (error: unknown, draft: Draft, raw: Value | undefined) => boolean {
  return (error, draft, raw) => {
    if (!(error instanceof RowRejection) || !error.badValue) throw error;
    const value = shownValue(raw);
    const warning: RowWarning =
      policy === 'keep' && value !== undefined
        ? { code: 'VALUE_KEPT', field: to, message: `kept as typed: ${error.message}` }
        : { code: 'VALUE_DROPPED', field: to, message: `left out: ${error.message}` };
    if (value !== undefined) warning.value = value;
    const where = error.column ?? column;
    if (where !== undefined) warning.column = where;
    if (error.expected !== undefined) warning.expected = error.expected;
    warning.rule = error.rule ?? yamlPath;
    warn(draft, warning);
    return warning.code === 'VALUE_KEPT';
  };
}

/**
 * Writes the code of one field entry: it reads the entry's value for the row and writes it into
 * the record (or the draft), rejecting the row where the value does not fit the target, or, as
 * the field's `onInvalid` says, leaving the value out or writing it as typed.
 */
export async function emitField(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
  index: number,
): Promise<void> {
  const { compiler } = context;
  const { code } = compiler;
  const yamlPath = `fields[${index}]`;
  const column = fieldColumn(field);
  const required = field.required
    ? code.constant(
        () =>
          new RowRejection(
            field.to,
            `\`${field.to}\` is required (${yamlPath}) but the row gives it no value`,
            'MAPPING_VALUE',
            false,
            { rule: yamlPath, column, value: '' },
          ),
      )
    : undefined;
  const { entry, policy } = invalidPolicy(field, info, context.onInvalid);
  code.line(`// ${yamlPath}: ${field.to}${policy === 'reject' ? '' : ` (onInvalid: ${policy})`}`);
  const raw = policy === 'reject' ? undefined : code.temp('raw');
  // A refusal the field's own code did not place is placed here: the entry, and its one column.
  const placed = code.constant(placeRejection(yamlPath, column));
  await code.blockAsync(
    'try',
    async () => {
      if (entry.items === 'numbered') {
        await emitNumbered(context, entry, info, yamlPath, required, policy, raw);
        return;
      }
      await emitGuarded(context, entry, info, yamlPath, policy, raw, async () => {
        if (entry.ref !== undefined && entry.key !== undefined)
          await emitRef(context, entry, { info, yamlPath, required, raw });
        else if (entry.items !== undefined) await emitItems(context, entry, info, yamlPath, required);
        else if (info.kind === 'address') await emitAddress(context, entry, yamlPath, required);
        else await emitSimple(context, entry, info, yamlPath, required, raw);
      });
    },
    `} catch (e) { throw ${placed}(e); }`,
  );
}

/** The one column an entry reads its value from (`items: {column}` included), if one; a numbered entry's differ per item. */
function fieldColumn(field: FieldEntry): string | undefined {
  if (typeof field.items === 'object') return field.items.column;
  if (field.items === 'numbered') return undefined;
  const columns = columnsOfSpec(field.value);
  return columns.length === 1 ? columns[0] : undefined;
}

/** Gives a field's refusal the entry's place in the mapping and its column, where its own rule did not say them. */
function placeRejection(yamlPath: string, column: string | undefined): (error: unknown) => unknown {
  return (error) => {
    if (error instanceof RowRejection) {
      error.rule ??= yamlPath;
      if (column !== undefined) error.column ??= column;
    }
    return error;
  };
}

/**
 * One place decides what a failing value becomes: the field (or one numbered item) is tried, and
 * a value it cannot take is dropped or kept; nothing of it is written before the value is read.
 */
async function emitGuarded(
  context: FieldContext,
  entry: FieldEntry,
  info: TargetInfo,
  yamlPath: string,
  policy: OnInvalid,
  raw: string | undefined,
  body: () => Promise<void>,
): Promise<void> {
  const { compiler } = context;
  const { code } = compiler;
  if (raw === undefined || policy === 'reject') {
    await code.blockAsync('', body);
    return;
  }
  await code.blockAsync('try', body, '} catch (error) {');
  const handle = code.constant(
    invalidHandler(entry.to, policy, yamlPath, compiler.star === undefined ? fieldColumn(entry) : undefined),
  );
  if (policy === 'keep') {
    const kept = code.name('kept');
    await code.blockAsync(`if (${handle}(error, draft, ${raw}))`, async () => {
      code.line(`const ${kept} = ${compiler.helpers.valueText}(${raw}).trim();`);
      for (const line of await sinkCode(context, entry, info, yamlPath, kept)) code.line(line);
    });
  } else code.line(`${handle}(error, draft, ${raw});`);
  code.line('}');
}

/** The columns a value spec reads by name: `{column: ...}`, or the placeholders of a template. */
export function columnsOfSpec(spec: ValueSpec | undefined): string[] {
  const template =
    typeof spec === 'string' ? spec : spec !== null && typeof spec === 'object' ? spec.template : undefined;
  if (template !== undefined && isTemplate(template)) {
    const parsed = parseTemplate(template);
    return parsed.ok ? parsed.columns : [];
  }
  const column = spec !== null && typeof spec === 'object' ? spec.column : undefined;
  return column === undefined ? [] : [column];
}

/**
 * The numbered columns (`phone.*.phoneNumber`) an `items: numbered` entry reads in its value,
 * type, service or address parts: a `*` stands for the item's number. Empty for other entries,
 * in which a `*` is part of the column's name.
 */
export function numberedColumns(field: FieldEntry): string[] {
  if (field.items !== 'numbered') return [];
  // A link's keys are templates, or names of one column.
  const keys = (typeof field.key === 'string' ? [field.key] : (field.key ?? [])).map((key) =>
    isTemplate(key) ? key : `{{${key}}}`,
  );
  const specs = [field.value, field.type, field.service, ...Object.values(field.parts ?? {}), ...keys];
  const out: string[] = [];
  for (const spec of specs) {
    for (const column of columnsOfSpec(spec)) if (column.includes('*') && !out.includes(column)) out.push(column);
  }
  return out;
}

/**
 * An entry over numbered columns: one item per number 1, 2, 3, ... until the row has none of
 * the entry's columns for the number (a legacy record holds as many as it has; a file's header
 * as many as its widest row). An item whose columns are all empty is no item.
 */
async function emitNumbered(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
  yamlPath: string,
  required: string | undefined,
  policy: OnInvalid,
  raw: string | undefined,
): Promise<void> {
  const { compiler } = context;
  const { code } = compiler;
  const columns = numberedColumns(field);
  const star = code.name('n');
  // Required: at least one item is written, counted in the list the items go to.
  const list = context.lists.use(ITEM_LISTS[info.kind] ?? 'fields');
  const before = required === undefined ? undefined : code.temp('before', `${list} === null ? 0 : ${list}.length`);
  await code.blockAsync(`for (let ${star} = 1; ; ${star}++)`, async () => {
    code.line(
      `if (${columns.map((column) => `${code.dynamicCell(numberedColumn(column, star))} === undefined`).join(' && ')}) break;`,
    );
    compiler.star = star;
    try {
      // The policy holds for each item: a third phone that cannot be read leaves the first two.
      await emitGuarded(context, field, info, yamlPath, policy, raw, async () => {
        if (field.ref !== undefined && field.key !== undefined)
          await emitRef(context, field, { info, yamlPath, required: undefined, raw });
        else if (info.kind === 'address') await emitAddress(context, field, yamlPath, undefined);
        else await emitSimple(context, field, info, yamlPath, undefined, raw);
      });
    } finally {
      compiler.star = undefined;
    }
  });
  if (required !== undefined)
    code.line(`if ((${list} === null ? 0 : ${list}.length) === ${before}) throw ${required}();`);
}

const ITEM_LISTS: Partial<Record<TargetInfo['kind'], ListKey>> = {
  email: 'emailAddresses',
  phone: 'phoneNumbers',
  website: 'websites',
  address: 'addresses',
  custom: 'fields',
};

/**
 * An entry over a column holding a JSON list of items: every item, each with its own type (and a
 * website's service; a custom field's definition and data tag), in the service's shapes.
 */
async function emitItems(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
  yamlPath: string,
  required: string | undefined,
): Promise<void> {
  const { compiler, lists, entity } = context;
  const { code } = compiler;
  const column = typeof field.items === 'object' ? field.items.column : '';
  const listKey = ITEM_LISTS[info.kind];
  if (listKey === undefined && info.kind !== 'links' && info.kind !== 'attachment')
    throw new Error(`\`items\` is not for ${field.to}; the mapping's checks let it through`);
  const v = code.temp('v');
  await emitValue(compiler, { column }, v, { field: field.to, yamlPath }, `${yamlPath}.items`);
  const to = field.to;
  await code.blockAsync(
    `if (${nonEmpty(compiler, v)})`,
    async () => {
      if (info.kind === 'links') {
        // Each key is one more element of the list, linked on its own as a numbered key is.
        const link = linkItems(
          to,
          typeof field.ref === 'string' ? [field.ref] : [...(field.ref ?? [])],
          yamlPath,
          column,
        );
        code.line(`${code.constant(link)}(${v}, record, draft);`);
      } else if (info.kind === 'attachment') {
        code.line(`${code.constant(attachmentItems)}(${v}, ${literal(to)}, ${literal(column)}, draft);`);
      } else if (info.kind === 'custom') {
        const scopeEntity = ENTITY_PLURAL[entity as keyof typeof ENTITY_PLURAL];
        const list = lists.use('fields');
        const checked = customCheck(context, field, info);
        const use = (
          item: { definition: string; tag: string | null },
          position: number,
          draft: Draft,
        ): { name: string; tag: string | null } => {
          draft.names.push({
            path: ['fields', position, 'definition'],
            kind: 'fieldDefinition',
            name: item.definition,
            scope: { entity: scopeEntity, tag: item.tag },
            yamlPath,
            ...checked,
          });
          return { name: item.definition, tag: item.tag };
        };
        code.line(
          `for (const item of ${code.constant(customItems)}(${v}, ${literal(to)}, ${literal(column)})) { ${lists.add('fields', `{ definition: ${code.constant(use)}(item, ${list} === null ? 0 : ${list}.length, draft), value: item.value }`)} }`,
        );
      } else {
        const kind = info.kind as keyof typeof ITEM_SHAPES;
        code.line(
          `for (const item of ${code.constant(contactItems)}(${literal(kind)}, ${v}, ${literal(to)}, ${literal(column)})) { ${lists.add(listKey as ListKey, 'item')} }`,
        );
      }
    },
    required === undefined ? '}' : `} else throw ${required}();`,
  );
}

/**
 * The links of a JSON cell that lists the linked records' keys (`[12, 15]`, as `export --mapping`
 * writes a project's additional contacts): one list element per key, each filled in by the plan.
 */
function linkItems(
  to: string,
  steps: readonly string[],
  yamlPath: string,
  column: string,
): (value: Value, record: Record<string, unknown>, draft: Draft) => void {
  const frozen = Object.freeze([...steps]);
  const listName = LINK_LISTS[to] ?? to;
  return (value, record, draft) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(valueText(value).trim());
    } catch {
      parsed = undefined;
    }
    if (
      !Array.isArray(parsed) ||
      parsed.some((key) => (typeof key !== 'string' && typeof key !== 'number') || String(key).trim() === '')
    ) {
      throw new RowRejection(
        to,
        `column \`${column}\` must hold a JSON list of keys of the linked records (as \`export --mapping\` writes it, e.g. [12, 15]), found ${shown(value)}`,
      );
    }
    const list = (record[listName] ??= []) as Array<{ id: null }>;
    for (const key of parsed as Array<string | number>) {
      list.push({ id: null });
      draft.refs.push({ path: [listName, list.length - 1, 'id'], steps: frozen, key: String(key).trim(), yamlPath });
    }
  };
}

/**
 * A file the record carries, relative to the input's folder. A live source (a legacy v1 account
 * read over its interface) has no folder, and the v1 interface has no attachment download: the
 * file is not carried, and the record says so with a NOT_CARRIED warning.
 */
function addAttachment(draft: Draft, path: string, contentType: string | null, to: string, filename?: string): void {
  const named = filename === undefined ? {} : { filename };
  if (isAbsolute(path)) draft.attachments.push({ path, contentType, ...named });
  else if (draft.inputDir !== null)
    draft.attachments.push({ path: resolve(draft.inputDir, path), contentType, ...named });
  else {
    warn(draft, {
      code: 'NOT_CARRIED',
      field: to,
      message: `the attachment ${path} is not carried: the legacy v1 interface offers no download of attachments; read an export with the files saved beside it to carry them`,
      value: basename(path),
    });
  }
}

/**
 * The files of a JSON cell (`[{"file": "attachments/7/report.pdf", "contentType": "application/pdf"}]`, with
 * `filename` when the service is to keep another name than the file's,
 * as `export --mapping --attachments DIR` writes it): paths relative to the input file's folder.
 */
function attachmentItems(value: Value, to: string, column: string, draft: Draft): void {
  for (const item of parseItemList(value, to, column)) {
    const file = itemText(item, 'file', to, column);
    if (file === undefined)
      throw new RowRejection(
        to,
        `column \`${column}\`: an attachment item needs \`file\` (its path), found ${JSON.stringify(item)}`,
      );
    // `filename`: the name the service is to keep, when the file on disk has another (a name too long for a file system).
    addAttachment(
      draft,
      file,
      itemText(item, 'contentType', to, column) ?? null,
      to,
      itemText(item, 'filename', to, column),
    );
  }
}

/** Where a repeatable link target's elements go in the record: the name the service gives the list. */
const LINK_LISTS: Readonly<Record<string, string>> = { additionalContact: 'parties' };

/** Links the service needs for the record to exist: a key that finds no record rejects the row rather than leaving the link out. */
function linkNeeded(entity: Entity, to: string): boolean {
  return entity === 'entry' || ((entity === 'kase' || entity === 'opportunity') && to === 'party');
}

/** What a link target takes as a value (an id; an organisation also by name). */
function linkObject(info: TargetInfo, to: string): (value: Value) => Record<string, unknown> {
  if (info.kind === 'organisation')
    return (value) =>
      typeof value === 'number' && toId(value) !== undefined ? { id: value } : { name: valueText(value).trim() };
  return (value) => {
    const id = toId(value);
    if (id === undefined)
      throw refused(
        to,
        `\`${to}\` takes an id (a whole number) or \`ref\` + \`key\`, found ${shown(value)}`,
        value,
        'an id (a whole number)',
      );
    return { id };
  };
}

/** How emitRef writes a link field. */
interface RefOptions {
  /** What the target field is (a link, a list of links). */
  info: TargetInfo;
  /** The field's place in the mapping, for its rejects. */
  yamlPath: string;
  /** The generated code's maker of the rejection for a link that finds nothing (a required field); undefined when the row may go without it. */
  required: string | undefined;
  /** The generated code's variable keeping the value as read, for `onInvalid: drop | keep`; undefined under `reject`. */
  raw: string | undefined;
}

/**
 * A link to a record of another step, by that step's key: the first of the `key` templates that
 * is filled, the others tried in order after it when the steps lack it, and the field's `value`
 * (an id, an organisation's name) written when none is found.
 */
async function emitRef(context: FieldContext, field: FieldEntry, options: RefOptions): Promise<void> {
  const { info, yamlPath, required, raw } = options;
  const { compiler } = context;
  const { code } = compiler;
  const to = field.to;
  // One frozen list for every record of the mapping: the hot path makes no copy per row.
  const steps = code.constant(Object.freeze(typeof field.ref === 'string' ? [field.ref] : [...(field.ref ?? [])]));
  const templates = typeof field.key === 'string' ? [field.key] : (field.key ?? []);
  const keys = templates.map((template) => {
    const key = code.temp('key');
    emitKeyTemplate(compiler, template, key);
    return key;
  });
  const mustLink = required !== undefined || linkNeeded(context.entity, to);
  let fallback: string | undefined;
  if (field.value !== undefined) {
    const value = code.temp('v');
    await emitValue(compiler, field.value, value, { field: to, yamlPath }, `${yamlPath}.value`, raw);
    fallback = code.temp('fallback', 'undefined');
    code.line(`if (${nonEmpty(compiler, value)}) ${fallback} = ${code.constant(linkObject(info, to))}(${value});`);
  }
  // The column of the first key, when one column makes it: what the reason of a link not made names.
  const keyColumns =
    templates[0] === undefined ? [] : columnsOfSpec(isTemplate(templates[0]) ? templates[0] : `{{${templates[0]}}}`);
  const keyColumn = keyColumns.length === 1 && !(keyColumns[0] as string).includes('*') ? keyColumns[0] : undefined;
  const extra = `${mustLink ? ', required: true' : ''}${fallback === undefined ? '' : `, fallback: ${fallback}`}${keyColumn === undefined ? '' : `, column: ${literal(keyColumn)}`}`;
  // A repeatable link (a project's additional contacts) is one more element of a list, linked on its own.
  const list = info.kind === 'links' ? (LINK_LISTS[to] ?? to) : null;
  const path = list === null ? `[${literal(to)}, 'id']` : `[${literal(list)}, list.length - 1, 'id']`;
  const place = (): void => {
    if (list === null) code.line(`record[${literal(to)}] = { id: null };`);
    else code.line(`const list = (record[${literal(list)}] ??= []); list.push({ id: null });`);
  };
  const push = (key: string, alternatives?: string): string =>
    `draft.refs.push({ path: ${path}, steps: ${steps}, key: ${key}, yamlPath: ${literal(yamlPath)}${alternatives === undefined ? '' : `, alternatives: ${alternatives}`}${extra} });`;
  const otherwise = (): string => {
    const none = required === undefined ? '' : ` else throw ${required}();`;
    const put =
      list === null ? `record[${literal(to)}] = ${fallback}` : `(record[${literal(list)}] ??= []).push(${fallback})`;
    return fallback === undefined ? `}${none}` : `} else if (${fallback} !== undefined) ${put};${none}`;
  };
  if (keys.length === 1) {
    const [key] = keys as [string];
    // Links travel as {id}; the plan fills in the id of the record the other step created.
    code.block(
      `if (${key} !== '')`,
      () => {
        place();
        code.line(push(key));
      },
      otherwise(),
    );
    return;
  }
  const filled = code.temp('filled', `[${keys.join(', ')}].filter((k) => k !== '')`);
  code.block(
    `if (${filled}.length > 0)`,
    () => {
      place();
      code.line(push(`${filled}[0]`, `${filled}.length > 1 ? ${filled}.slice(1) : undefined`));
    },
    otherwise(),
  );
}

/** Every target but addresses and links: one value, written when it is not empty. */
async function emitSimple(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
  yamlPath: string,
  required: string | undefined,
  raw: string | undefined,
): Promise<void> {
  const { compiler } = context;
  const { code } = compiler;
  const owner = { field: field.to, yamlPath };
  const value = code.temp('v');
  const known =
    field.value === undefined
      ? { value: null }
      : await emitValue(compiler, field.value, value, owner, `${yamlPath}.value`, raw);
  if (known !== undefined && isEmpty(known.value)) {
    // Nothing to write in any row.
    if (required !== undefined) code.line(`throw ${required}();`);
    else if (field.ifEmpty === 'clear') code.line(`record[${literal(field.to)}] = null;`);
    return;
  }
  // The sink's own reads (a row-dependent `type`) happen only for a value that is written.
  const otherwise =
    required !== undefined
      ? `} else throw ${required}();`
      : field.ifEmpty === 'clear'
        ? `} else record[${literal(field.to)}] = null;`
        : '}';
  await code.blockAsync(
    known === undefined ? `if (${nonEmpty(compiler, value)})` : '',
    async () => {
      for (const line of await sinkCode(context, field, info, yamlPath, value)) code.line(line);
    },
    known !== undefined ? '}' : otherwise,
  );
}

/** The statements that write a value (in the variable `v`, not empty) into the record. */
async function sinkCode(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
  yamlPath: string,
  v: string,
): Promise<string[]> {
  const { compiler, lists, entity } = context;
  const { code } = compiler;
  const to = field.to;
  const target = `record[${literal(to)}]`;
  const text = textOf(compiler, v);
  const call = (fn: unknown): string => `${code.constant(fn)}(${v})`;
  switch (info.kind) {
    case 'text':
      return [`${target} = ${text};`];
    case 'partyType':
      return [
        `record.type = ${call((value: Value) => {
          const type = valueText(value).trim().toLowerCase();
          if (type !== 'person' && type !== 'organisation')
            throw refused(
              to,
              `\`type\` must be person or organisation, found ${shown(value)}; a \`lookup\` transform can translate other words`,
              value,
              'person or organisation',
            );
          return type;
        })};`,
      ];
    case 'date':
      return [`${target} = ${call((value: Value) => toDate(value, to))};`];
    case 'timestamp':
      return [`${target} = ${call((value: Value) => toTimestamp(value, to))};`];
    case 'time':
      return [`${target} = ${call((value: Value) => toTime(value, to))};`];
    case 'integer':
      return [`${target} = ${call((value: Value) => toInteger(value, to, info))};`];
    case 'choice': {
      const choices = info.choices ?? [];
      return [
        `${target} = ${call((value: Value) => {
          const choice = valueText(value).trim().toUpperCase();
          if (!choices.includes(choice))
            throw refused(
              to,
              `\`${to}\` must be one of ${choices.join(', ')}, found ${shown(value)}`,
              value,
              `one of ${choices.join(', ')}`,
            );
          return choice;
        })};`,
      ];
    }
    case 'amount':
      return [
        `draft.amount = ${call((value: Value) => {
          const amount = toNumber(value, to);
          if (amount < 0)
            throw refused(to, `\`amount\` must be at least 0, found ${shown(value)}`, value, 'an amount of at least 0');
          return amount;
        })};`,
      ];
    case 'currency':
      return [
        `draft.currency = ${call((value: Value) => {
          const currency = valueText(value).trim().toUpperCase();
          if (!/^[A-Z]{3}$/.test(currency))
            throw refused(
              to,
              `\`currency\` must be an ISO 4217 code such as EUR, found ${shown(value)}`,
              value,
              'a currency code such as EUR',
            );
          return currency;
        })};`,
      ];
    case 'pipeline':
      return [`draft.pipeline = ${text}.trim();`];
    case 'organisation':
    case 'link':
      return [`${target} = ${call(linkObject(info, to))};`];
    case 'links': {
      // One more element of a list (a project's additional contacts), given by id.
      const list = LINK_LISTS[to] ?? to;
      const make = linkObject(info, to);
      const add = (value: Value, draft: Draft): void => {
        ((draft.record[list] ??= []) as unknown[]).push(make(value));
      };
      return [`${code.constant(add)}(${v}, draft);`];
    }
    case 'name':
      return nameSink(context, field, info, yamlPath, v, text);
    case 'names': {
      const kind = info.nameKind ?? 'trackDefinition';
      const add = (value: Value, draft: Draft): void => {
        const list = listOf(draft, to);
        for (const name of items(value)) {
          draft.names.push({ path: [to, list.length, 'definition'], kind, name, yamlPath });
          list.push({ definition: null });
        }
      };
      return [`${code.constant(add)}(${v}, draft);`];
    }
    case 'tags':
      return [`${code.constant(addTags)}(draft, ${v});`];
    case 'custom': {
      const definition = field.definition ?? '';
      const tag = field.tag ?? null;
      const scope = Object.freeze({ entity: ENTITY_PLURAL[entity as keyof typeof ENTITY_PLURAL], tag });
      // The same for every row but for the position in `fields`: built once per position, frozen
      // and shared. Resolving replaces `definition` in the row's own element, never these objects.
      const reference = code.constant(Object.freeze({ name: definition, tag }));
      const uses: NameUse[] = [];
      const checked = customCheck(context, field, info);
      const useAt = code.constant(
        (position: number) =>
          (uses[position] ??= frozenUse({
            path: ['fields', position, 'definition'],
            kind: 'fieldDefinition',
            name: definition,
            scope,
            yamlPath,
            ...checked,
          })),
      );
      const list = lists.use('fields');
      return [
        `draft.names.push(${useAt}(${list} === null ? 0 : ${list}.length));`,
        lists.add(
          'fields',
          `{ definition: ${reference}, value: typeof ${v} === 'string' ? ${v} : ${code.constant(customValue)}(${v}) }`,
        ),
      ];
    }
    case 'attachment': {
      // `type` is the file's content type (a v1 export lists it beside the file name); the
      // importer takes it from the file's extension where none is given.
      const attach = (value: Value, contentType: string | undefined, draft: Draft): void => {
        for (const path of items(value)) addAttachment(draft, path, contentType ?? null, to);
      };
      return [`${code.constant(attach)}(${v}, ${await typeTextOf(context, field, yamlPath)}, draft);`];
    }
    case 'phone':
    case 'email':
    case 'website':
      return await contactSink(context, field, info, yamlPath, v);
    case 'address':
      throw new Error('addresses are written by emitAddress');
  }
}

/** A user, team, milestone, stage, ... by name: a placeholder in the record and a name to resolve. */
function nameSink(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
  yamlPath: string,
  v: string,
  text: string,
): string[] {
  const { code } = context.compiler;
  const to = field.to;
  const target = `record[${literal(to)}]`;
  const kind = info.nameKind ?? 'user';
  // The service takes most of these as {id}, but activity types and project stages as a bare
  // integer, and a lost reason as its name: the placeholder has the shape the value goes into.
  const byName = NAME_VALUED_KINDS.has(kind);
  const bare = byName || BARE_ID_KINDS.has(kind);
  const path = Object.freeze(bare ? [to] : [to, 'id']);
  const column = context.compiler.star === undefined ? fieldColumn(field) : undefined;
  const onUnknown = {
    ...(field.onUnknown === undefined ? {} : { onUnknown: field.onUnknown }),
    ...(column === undefined ? {} : { column }),
  };
  let use: (name: string, draft: Draft) => void;
  if (kind === 'milestone') {
    // Its scope is filled in per row when the record is finished, so it cannot be shared.
    use = (name, draft) => {
      const fresh: NameUse = { path: [...path], kind, name, yamlPath, ...onUnknown };
      draft.names.push(fresh);
      draft.milestone = fresh;
    };
  } else {
    // Consecutive rows mostly name the same owner or team: share the (frozen) use.
    let last: NameUse | null = null;
    use = (name, draft) => {
      if (last === null || last.name !== name)
        last = frozenUse({ path: [...path], kind, name, yamlPath, ...onUnknown });
      draft.names.push(last);
    };
  }
  const placeholder = `${target} = ${bare ? 'null' : '{ id: null }'}; ${code.constant(use)}(${text}.trim(), draft);`;
  // A number is an id, except for a name-valued kind, which is always looked up (by name or id).
  if (byName) return [placeholder];
  return [
    `if (typeof ${v} === 'number' && Number.isInteger(${v})) ${target} = ${bare ? v : `{ id: ${v} }`};`,
    `else { ${placeholder} }`,
  ];
}

/**
 * An expression for the text of the entry's `type` (undefined when empty or not given): a literal
 * when it is the same for every row, else read per row, before the value is written.
 */
async function typeTextOf(context: FieldContext, field: FieldEntry, yamlPath: string): Promise<string> {
  const { code, helpers } = context.compiler;
  const fixed = constantType(field.type);
  if (fixed !== undefined) return fixed.text === undefined ? 'undefined' : literal(fixed.text);
  const typeValue = code.temp('type');
  await emitValue(context.compiler, field.type ?? null, typeValue, { field: field.to, yamlPath }, `${yamlPath}.type`);
  const typeText = code.temp('typeText');
  code.line(
    `${typeText} = ${typeValue} === undefined || ${helpers.isEmpty}(${typeValue}) ? undefined : ${helpers.valueText}(${typeValue}).trim();`,
  );
  return typeText;
}

/** Phone numbers, email addresses and websites: one entry per item of the value. */
async function contactSink(
  context: FieldContext,
  field: FieldEntry,
  info: TargetInfo,
  yamlPath: string,
  v: string,
): Promise<string[]> {
  const { compiler, lists } = context;
  const { code, helpers } = compiler;
  const listKey = info.kind === 'phone' ? 'phoneNumbers' : info.kind === 'email' ? 'emailAddresses' : 'websites';
  const valueKey = info.kind === 'phone' ? 'number' : 'address';
  // The entry's object literal, with the item's text in `x`; its type known now or read per row.
  let entry: (x: string) => string;
  if (info.kind === 'website') {
    // A website's type and service: constants, or read per row (a legacy export says each item's).
    const typeValue = code.temp('type');
    await emitValue(compiler, field.type ?? null, typeValue, { field: field.to, yamlPath }, `${yamlPath}.type`);
    const serviceValue = code.temp('service');
    await emitValue(
      compiler,
      field.service ?? 'URL',
      serviceValue,
      { field: field.to, yamlPath },
      `${yamlPath}.service`,
    );
    const site = code.constant(website);
    entry = (x) => `${site}(${typeValue}, ${serviceValue}, ${x})`;
  } else {
    const fixed = constantType(field.type);
    if (fixed !== undefined) {
      const type = fixed.text;
      entry = (x) => (type === undefined ? `{ ${valueKey}: ${x} }` : `{ type: ${literal(type)}, ${valueKey}: ${x} }`);
    } else {
      // A type that depends on the row: read before the value is written, as the value was.
      const typeValue = code.temp('type');
      await emitValue(compiler, field.type ?? null, typeValue, { field: field.to, yamlPath }, `${yamlPath}.type`);
      const typeText = code.temp('typeText');
      code.line(
        `${typeText} = ${typeValue} === undefined || ${helpers.isEmpty}(${typeValue}) ? undefined : ${helpers.valueText}(${typeValue}).trim();`,
      );
      entry = (x) => `(${typeText} === undefined ? { ${valueKey}: ${x} } : { type: ${typeText}, ${valueKey}: ${x} })`;
    }
  }
  return [
    `if (typeof ${v} === 'string') { ${lists.add(listKey, entry(`${helpers.trimText}(${v})`))} }`,
    `else for (const item of ${code.constant(items)}(${v})) { ${lists.add(listKey, entry('item'))} }`,
  ];
}

/** A website item: its service checked (upper case; URL when empty), its type when given. */
function website(type: Value | undefined, service: Value | undefined, address: string): Record<string, string> {
  const named = service === undefined || isEmpty(service) ? 'URL' : valueText(service).trim().toUpperCase();
  if (!(WEBSITE_SERVICES as readonly string[]).includes(named)) {
    throw new RowRejection(
      'website',
      `a website's \`service\` must be one of ${WEBSITE_SERVICES.join(', ')}, found ${shown(service ?? null)}; a \`lookup\` transform can translate other words`,
    );
  }
  return type === undefined || isEmpty(type)
    ? { service: named, address }
    : { type: valueText(type).trim(), service: named, address };
}

/** An address from a value (the street) and parts; written when any of them is not empty. */
async function emitAddress(
  context: FieldContext,
  field: FieldEntry,
  yamlPath: string,
  required: string | undefined,
): Promise<void> {
  const { compiler, lists } = context;
  const { code, helpers } = compiler;
  const owner = { field: field.to, yamlPath };
  const keys = ['street', 'city', 'state', 'zip', 'country'] as const;
  const slots = new Map<string, string>();
  const filled = code.temp('filled', 'false');
  const read = async (spec: ValueSpec, key: (typeof keys)[number], at: string): Promise<void> => {
    const slot = slots.get(key) ?? code.temp(key);
    slots.set(key, slot);
    const value = code.temp('part');
    await emitValue(compiler, spec, value, owner, at);
    code.line(`if (${nonEmpty(compiler, value)}) { ${slot} = ${textOf(compiler, value)}; ${filled} = true; }`);
  };
  if (field.value !== undefined) await read(field.value, 'street', `${yamlPath}.value`);
  for (const key of keys) {
    const spec = field.parts?.[key];
    if (spec !== undefined) await read(spec, key, `${yamlPath}.parts.${key}`);
  }
  const fixed = constantType(field.type);
  await code.blockAsync(
    `if (${filled})`,
    async () => {
      // Type first, then the parts in their usual order, whichever were given.
      const address = code.temp('address');
      const given = keys.flatMap((key) => {
        const slot = slots.get(key);
        return slot === undefined ? [] : [{ key, slot }];
      });
      const addParts = (): void => {
        for (const { key, slot } of given) code.line(`if (${slot} !== undefined) ${address}.${key} = ${slot};`);
      };
      if (fixed !== undefined) {
        // With every part there, as in most rows, the object is built at once, in one shape.
        const type = fixed.text === undefined ? [] : [`type: ${literal(fixed.text)}`];
        const whole = [...type, ...given.map(({ key, slot }) => `${key}: ${slot}`)].join(', ');
        code.line(`if (${given.map(({ slot }) => `${slot} !== undefined`).join(' && ')}) ${address} = { ${whole} };`);
        code.block('else', () => {
          code.line(`${address} = { ${type.join('')} };`);
          addParts();
        });
      } else {
        code.line(`${address} = {};`);
        const type = code.temp('type');
        await emitValue(compiler, field.type ?? null, type, owner, `${yamlPath}.type`);
        code.line(
          `if (${type} !== undefined && !${helpers.isEmpty}(${type})) ${address}.type = ${helpers.valueText}(${type}).trim();`,
        );
        addParts();
      }
      code.line(lists.add('addresses', address));
    },
    required === undefined ? '}' : `} else throw ${required}();`,
  );
}
