/**
 * The v1 shapes of stored records. The same records serve the v2 interface; here ids become text,
 * owners become usernames, dates become v1 timestamps and party addresses carry country names.
 */
import countries from 'i18n-iso-countries';
import en from 'i18n-iso-countries/langs/en.json' with { type: 'json' };
import type { SandboxContext } from '../context.ts';
import type {
  EntryRec,
  FieldDefinitionRec,
  FieldValueRec,
  KaseRec,
  OpportunityRec,
  PartyRec,
  TaskRec,
  WebsiteRec,
} from '../model.ts';
import { v1Timestamp } from './input.ts';
import { listNode, recordNode, type RecordNode, type V1Node } from './xml.ts';

countries.registerLocale(en);

/** Stored countries may be codes (from v2 writes); v1 always shows the English name. */
export function countryName(country: string | null): string | null {
  if (country === null) return null;
  const code = country.trim();
  if (/^[A-Za-z]{2}$/.test(code) || /^[A-Za-z]{3}$/.test(code)) {
    return countries.getName(code.toUpperCase(), 'en') ?? country;
  }
  return country;
}

/** The username v1 shows for an owner or creator; null when the user is gone. */
export function usernameOf(ctx: SandboxContext, userId: number | null): string | null {
  return userId === null ? null : (ctx.store.users.get(userId)?.username ?? null);
}

/** A person's full name or an organisation's name, as v1 shows the party a task is on. */
export function partyDisplayName(party: PartyRec): string {
  if (party.type === 'organisation') return party.name ?? '';
  return [party.firstName, party.lastName].filter((part) => part).join(' ');
}

/** `<kase>` with the documented case fields, plus `closeDate` on closed cases. */
export function kaseNode(ctx: SandboxContext, kase: KaseRec): RecordNode {
  return recordNode('kase', [
    ['id', kase.id],
    ['status', kase.status],
    ['name', kase.name],
    ['description', kase.description],
    ['partyId', kase.partyId],
    ['owner', usernameOf(ctx, kase.ownerId)],
    ['createdOn', v1Timestamp(kase.createdAt)],
    ['updatedOn', v1Timestamp(kase.updatedAt)],
    // Not in the documented field list, but a closed case without its date could not be copied.
    ['closeDate', kase.status === 'CLOSED' ? v1Timestamp(kase.closedOn) : null],
  ]);
}

const WEB_PREFIX: Record<string, string> = {
  TWITTER: 'https://twitter.com/',
  GITHUB: 'https://github.com/',
  FACEBOOK: 'https://www.facebook.com/',
  YOUTUBE: 'https://www.youtube.com/user/',
  FLICKR: 'https://www.flickr.com/photos/',
  SKYPE: 'skype:',
  XING: 'https://www.xing.com/profile/',
  LINKED_IN: 'https://www.linkedin.com/in/',
  GOOGLE_PLUS: 'https://plus.google.com/',
};

/** The clickable address of a website entry: handles of social services become profile URLs. */
export function websiteUrl(site: WebsiteRec): string {
  const address = site.address.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(address)) return address;
  const prefix = WEB_PREFIX[site.service];
  if (prefix) return `${prefix}${address.replace(/^@/, '')}`;
  return `http://${address}`;
}

function contactsNode(party: PartyRec): V1Node {
  const items: V1Node[] = [
    ...party.addresses.map((a) =>
      recordNode('address', [
        ['id', a.id],
        ['type', a.type],
        ['street', a.street],
        ['city', a.city],
        ['state', a.state],
        ['zip', a.zip],
        ['country', countryName(a.country)],
      ]),
    ),
    ...party.emailAddresses.map((e) =>
      recordNode('email', [
        ['id', e.id],
        ['type', e.type],
        ['emailAddress', e.address],
      ]),
    ),
    ...party.phoneNumbers.map((p) =>
      recordNode('phone', [
        ['id', p.id],
        ['type', p.type],
        ['phoneNumber', p.number],
      ]),
    ),
    ...party.websites.map((w) =>
      recordNode('website', [
        ['id', w.id],
        ['type', w.type],
        ['webAddress', w.address],
        ['webService', w.service],
        ['url', websiteUrl(w)],
      ]),
    ),
  ];
  return listNode('contacts', ['address', 'email', 'phone', 'website'], items, false);
}

/** `<person>` or `<organisation>` with contacts, in the recorded answers' order (`pictureURL` after `contacts`). */
export function partyNode(ctx: SandboxContext, party: PartyRec): RecordNode {
  if (party.type === 'organisation') {
    return recordNode('organisation', [
      ['id', party.id],
      ['contacts', contactsNode(party)],
      ['pictureURL', party.pictureURL],
      ['name', party.name],
      ['about', party.about],
      ['createdOn', v1Timestamp(party.createdAt)],
      ['updatedOn', v1Timestamp(party.updatedAt)],
    ]);
  }
  const organisation = party.organisationId === null ? undefined : ctx.store.parties.get(party.organisationId);
  return recordNode('person', [
    ['id', party.id],
    ['contacts', contactsNode(party)],
    ['pictureURL', party.pictureURL],
    ['title', party.title],
    ['firstName', party.firstName],
    ['lastName', party.lastName],
    ['jobTitle', party.jobTitle],
    ['organisationId', organisation?.id],
    ['organisationName', organisation?.name],
    ['about', party.about],
    ['createdOn', v1Timestamp(party.createdAt)],
    ['updatedOn', v1Timestamp(party.updatedAt)],
  ]);
}

/** `<opportunity>` as old exports show it: milestone by id and name, value with two decimals. */
export function opportunityNode(ctx: SandboxContext, opportunity: OpportunityRec): RecordNode {
  const milestone = ctx.store.milestones.get(opportunity.milestoneId);
  return recordNode('opportunity', [
    ['id', opportunity.id],
    ['name', opportunity.name],
    ['description', opportunity.description],
    ['partyId', opportunity.partyId],
    ['currency', opportunity.value?.currency],
    ['value', opportunity.value ? opportunity.value.amount.toFixed(2) : null],
    ['durationBasis', opportunity.durationBasis],
    ['duration', opportunity.duration],
    ['milestoneId', milestone?.id],
    ['milestone', milestone?.name],
    ['probability', opportunity.probability],
    ['expectedCloseDate', v1Timestamp(opportunity.expectedCloseOn)],
    ['actualCloseDate', v1Timestamp(opportunity.closedOn)],
    ['owner', usernameOf(ctx, opportunity.ownerId)],
    ['createdOn', v1Timestamp(opportunity.createdAt)],
    ['updatedOn', v1Timestamp(opportunity.updatedAt)],
  ]);
}

/**
 * `<task>`: `dueDate` for whole-day tasks, `dueDateTime` for tasks with a time of day, and the id and
 * name of the one record the task is on.
 */
export function taskNode(ctx: SandboxContext, task: TaskRec): RecordNode {
  const category = task.categoryId === null ? undefined : ctx.store.taskCategories.get(task.categoryId);
  const party = task.partyId === null ? undefined : ctx.store.parties.get(task.partyId);
  const opportunity = task.opportunityId === null ? undefined : ctx.store.opportunities.get(task.opportunityId);
  const kase = task.kaseId === null ? undefined : ctx.store.kases.get(task.kaseId);
  return recordNode('task', [
    ['id', task.id],
    ['description', task.description],
    ['detail', task.detail],
    ['category', category?.name],
    ['owner', usernameOf(ctx, task.ownerId)],
    ['dueDate', task.dueOn !== null && task.dueTime === null ? v1Timestamp(task.dueOn) : null],
    ['dueDateTime', task.dueOn !== null && task.dueTime !== null ? `${task.dueOn}T${task.dueTime}Z` : null],
    ['partyId', party?.id],
    ['partyName', party ? partyDisplayName(party) : null],
    ['opportunityId', opportunity?.id],
    ['opportunityName', opportunity?.name],
    ['caseId', kase?.id],
    ['caseName', kase?.name],
  ]);
}

const ENTRY_TYPES: Record<EntryRec['type'], string> = { note: 'Note', email: 'Email', task: 'Task' };

/** `<historyItem>` of an entry: note, email or completed-task record. */
export function historyItemNode(ctx: SandboxContext, entry: EntryRec): RecordNode {
  const creator = ctx.store.users.get(entry.creatorId);
  return recordNode('historyItem', [
    ['id', entry.id],
    ['type', ENTRY_TYPES[entry.type]],
    ['entryDate', v1Timestamp(entry.entryAt)],
    ['creator', creator?.username],
    ['creatorName', creator?.name],
    ['subject', entry.subject],
    ['note', entry.content],
    [
      'attachments',
      entry.attachments.length === 0
        ? null
        : listNode(
            'attachments',
            ['attachment'],
            entry.attachments.map((a) =>
              recordNode('attachment', [
                ['id', a.id],
                ['filename', a.filename],
                ['contentType', a.contentType],
              ]),
            ),
            false,
          ),
    ],
  ]);
}

/** A custom field value with the value element its type uses; null when it shows nothing. */
export function customFieldNode(ctx: SandboxContext, field: FieldValueRec): RecordNode | null {
  const definition = ctx.store.fieldDefinitions.get(field.definitionId);
  if (!definition) return null;
  // An unticked checkbox is no value at all in v1.
  if (field.value === false || field.value === '') return null;
  const tag = definition.tagId === null ? undefined : ctx.store.tags.get(definition.tagId);
  const valueField: [string, string] =
    definition.type === 'Boolean'
      ? ['boolean', 'true']
      : definition.type === 'Date'
        ? ['date', v1Timestamp(String(field.value)) ?? '']
        : ['text', String(field.value)];
  return recordNode('customField', [['id', field.id], ['tag', tag?.name], ['label', definition.name], valueField]);
}

/** `<customFieldDefinition>`: options hold the pattern of a Text field or the `;`-joined values of a List. */
export function definitionNode(ctx: SandboxContext, definition: FieldDefinitionRec): RecordNode {
  const tag = definition.tagId === null ? undefined : ctx.store.tags.get(definition.tagId);
  const options =
    definition.type === 'List'
      ? (definition.options ?? []).join(';')
      : definition.type === 'Text'
        ? definition.pattern
        : null;
  return recordNode('customFieldDefinition', [
    ['id', definition.id],
    ['tag', tag?.name],
    ['label', definition.name],
    ['type', definition.type],
    ['options', options],
    ['forClass', definition.forClass],
  ]);
}
