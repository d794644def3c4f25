/** Records put straight into a sandbox store, for tests that need data without going through the interface. */
import type { EntryRec, KaseRec, OpportunityRec, PartyRec, TaskRec } from '../../src/sandbox/model.ts';
import type { Store } from '../../src/sandbox/store.ts';

const AT = '2024-03-01T10:00:00Z';

export function userId(store: Store, username: string): number {
  const user = store.users.all().find((u) => u.username === username);
  if (!user) throw new Error(`no seeded user ${username}`);
  return user.id;
}

export function addParty(store: Store, fields: Partial<PartyRec> = {}): PartyRec {
  return store.parties.insert({
    type: 'person',
    title: null,
    firstName: 'Ada',
    lastName: 'Lovelace',
    jobTitle: null,
    name: null,
    about: null,
    organisationId: null,
    ownerId: userId(store, 'admin'),
    teamId: null,
    lastContactedAt: null,
    pictureURL: 'https://example.test/p.png',
    addresses: [],
    phoneNumbers: [],
    emailAddresses: [],
    websites: [],
    tagIds: [],
    fields: [],
    restrictedFor: [],
    createdAt: AT,
    updatedAt: AT,
    ...fields,
  });
}

export function addKase(store: Store, partyId: number, fields: Partial<KaseRec> = {}): KaseRec {
  return store.kases.insert({
    name: 'Case',
    description: null,
    partyId,
    partyIds: [],
    ownerId: userId(store, 'admin'),
    teamId: null,
    status: 'OPEN',
    opportunityId: null,
    stageId: null,
    startOn: null,
    expectedCloseOn: null,
    closedOn: null,
    lastContactedAt: null,
    tagIds: [],
    fields: [],
    restrictedFor: [],
    createdAt: AT,
    updatedAt: AT,
    ...fields,
  });
}

export function addOpportunity(store: Store, partyId: number, fields: Partial<OpportunityRec> = {}): OpportunityRec {
  const milestone = store.milestones.all().find((m) => m.name === 'Proposal');
  if (!milestone) throw new Error('no seeded milestone');
  return store.opportunities.insert({
    name: 'Deal',
    description: null,
    partyId,
    partyIds: [],
    ownerId: userId(store, 'sam'),
    teamId: null,
    milestoneId: milestone.id,
    lostReason: null,
    value: { amount: 1500, currency: 'GBP' },
    expectedCloseOn: '2024-06-30',
    closedOn: null,
    probability: 50,
    durationBasis: 'FIXED',
    duration: null,
    lastContactedAt: null,
    tagIds: [],
    fields: [],
    restrictedFor: [],
    createdAt: AT,
    updatedAt: AT,
    ...fields,
  });
}

export function addTask(store: Store, fields: Partial<TaskRec> = {}): TaskRec {
  return store.tasks.insert({
    description: 'Call back',
    detail: null,
    categoryId: null,
    status: 'OPEN',
    partyId: null,
    opportunityId: null,
    kaseId: null,
    ownerId: userId(store, 'admin'),
    dueOn: '2024-04-01',
    dueTime: null,
    completedAt: null,
    trackId: null,
    repeat: null,
    createdAt: AT,
    updatedAt: AT,
    ...fields,
  });
}

export function addEntry(store: Store, fields: Partial<EntryRec> = {}): EntryRec {
  return store.entries.insert({
    type: 'note',
    content: 'Met at the fair',
    subject: null,
    creatorId: userId(store, 'kim'),
    activityTypeId: -1,
    entryAt: AT,
    partyId: null,
    kaseId: null,
    opportunityId: null,
    partyIds: [],
    attachments: [],
    participants: [],
    createdAt: AT,
    updatedAt: AT,
    ...fields,
  });
}

export function definitionId(store: Store, entity: string, name: string): number {
  const found = store.fieldDefinitions.all().find((d) => d.entity === entity && d.name === name);
  if (!found) throw new Error(`no seeded field ${name}`);
  return found.id;
}
