import { timestamp } from './http.ts';
import type { EntityKind, FieldDefinitionRec, FieldType } from './model.ts';
import type { Store } from './store.ts';

/** Built-in activity types have fixed negative ids in every account. */
export const BUILT_IN_ACTIVITY_TYPES = [
  { id: -1, name: 'Note', iconId: 'DOCUMENT' },
  { id: -2, name: 'Meeting', iconId: 'MEETING' },
  { id: -3, name: 'Call', iconId: 'PHONE' },
] as const;

/** The username of the seeded Administrator, who owns the sandbox's personal tokens. */
export const ADMIN_USERNAME = 'admin';

/**
 * Fills an empty store with the default account: users with roles and teams, a sales pipeline with
 * milestones, custom field definitions (plain and in a data tag) for parties, opportunities and
 * projects, activity types, task categories and a track definition.
 */
export function seedAccount(store: Store, now: Date): void {
  const at = timestamp(now);
  const sales = store.teams.insert({ name: 'Sales' });
  const support = store.teams.insert({ name: 'Support' });

  store.users.insert({
    username: ADMIN_USERNAME,
    name: 'Alex Admin',
    email: 'admin@sandbox.example',
    role: 'Administrator',
    defaultTeamId: sales.id,
    teamIds: [sales.id, support.id],
  });
  store.users.insert({
    username: 'sam',
    name: 'Sam Seller',
    email: 'sam@sandbox.example',
    role: 'User',
    defaultTeamId: sales.id,
    teamIds: [sales.id],
  });
  store.users.insert({
    username: 'kim',
    name: 'Kim Keeper',
    email: 'kim@sandbox.example',
    role: 'User',
    defaultTeamId: support.id,
    teamIds: [support.id],
  });

  const pipeline = store.pipelines.insert({
    name: 'Sales',
    description: 'New business',
    archived: false,
    createdAt: at,
    updatedAt: at,
  });
  const milestones: Array<[string, number, boolean, number | null]> = [
    ['New', 10, false, 14],
    ['Qualified', 25, false, 14],
    ['Proposal', 50, false, 21],
    ['Negotiation', 75, false, 21],
    ['Won', 100, true, null],
    ['Lost', 0, true, null],
  ];
  milestones.forEach(([name, probability, complete, daysUntilStale], displayOrder) => {
    store.milestones.insert({
      pipelineId: pipeline.id,
      name,
      description: null,
      probability,
      complete,
      daysUntilStale,
      displayOrder,
      createdAt: at,
      updatedAt: at,
    });
  });

  for (const type of BUILT_IN_ACTIVITY_TYPES) {
    store.activityTypes.put({ id: type.id, name: type.name, iconId: type.iconId, updateLastContacted: type.id !== -1 });
  }
  store.activityTypes.insert({ name: 'Email follow-up', iconId: 'MAIL', updateLastContacted: true });

  const categories = [
    ['Call', '#2f80ed'],
    ['Email', '#27ae60'],
    ['Follow-up', '#f2994a'],
    ['Meeting', '#9b51e0'],
  ] as const;
  const categoryIds = categories.map(([name, colour]) => store.taskCategories.insert({ name, colour }).id);

  let order = 0;
  const field = (
    entity: EntityKind,
    name: string,
    type: FieldType,
    extra: Partial<Omit<FieldDefinitionRec, 'id' | 'entity' | 'name' | 'type'>> = {},
  ): void => {
    store.fieldDefinitions.insert({
      entity,
      name,
      type,
      options: null,
      pattern: null,
      tagId: null,
      important: false,
      forClass: null,
      displayOrder: order++,
      ...extra,
    });
  };
  field('parties', 'Industry', 'List', {
    options: ['Agriculture', 'Finance', 'Manufacturing', 'Retail', 'Software', 'Other'],
  });
  field('parties', 'Customer since', 'Date');
  field('parties', 'VIP', 'Boolean');
  field('parties', 'Account number', 'Text', { pattern: '^[A-Z]{2}-\\d{4,8}$', important: true });
  field('parties', 'Preferred language', 'Text', { forClass: 'PERSON' });
  const customer = store.tags.insert({
    entity: 'parties',
    name: 'Customer',
    description: 'Customers under contract',
    dataTag: true,
  });
  field('parties', 'Contract end', 'Date', { tagId: customer.id });
  field('parties', 'Support level', 'List', { tagId: customer.id, options: ['Bronze', 'Silver', 'Gold'] });
  store.tags.insert({ entity: 'parties', name: 'Prospect', description: null, dataTag: false });

  field('opportunities', 'Lead source', 'List', { options: ['Web', 'Referral', 'Event', 'Cold call', 'Partner'] });
  field('opportunities', 'Signed', 'Boolean');
  field('opportunities', 'Contract start', 'Date');
  field('opportunities', 'Competitor', 'Text');

  field('kases', 'Priority', 'List', { options: ['Low', 'Normal', 'High', 'Urgent'] });
  field('kases', 'Go-live', 'Date');
  field('kases', 'Reference', 'Text');
  field('kases', 'Billable', 'Boolean');

  seedAccountLists(store, now);

  store.trackDefinitions.insert({
    description: 'Onboarding',
    tag: 'onboarding',
    captureRule: 'KASE',
    direction: 'START_DATE',
    createdAt: at,
    updatedAt: at,
    taskDefinitions: [
      {
        id: store.next(),
        description: 'Welcome call',
        daysAfterRule: 'TRACK_START',
        daysAfter: 0,
        displayOrder: 0,
        dayDelayRule: 'TRACK_DAYS',
        assigneeType: 'ENTITY_OWNER',
        categoryId: categoryIds[0] ?? null,
      },
      {
        id: store.next(),
        description: 'Send training material',
        daysAfterRule: 'LAST_TASK',
        daysAfter: 3,
        displayOrder: 1,
        dayDelayRule: 'TRACK_WORKDAYS',
        assigneeType: 'ENTITY_OWNER',
        categoryId: categoryIds[1] ?? null,
      },
      {
        id: store.next(),
        description: 'Check-in',
        daysAfterRule: 'TRACK_START',
        daysAfter: 2,
        displayOrder: 2,
        dayDelayRule: 'TRACK_WEEKS',
        assigneeType: 'ENTITY_OWNER',
        categoryId: categoryIds[2] ?? null,
      },
    ],
  });
  store.trackDefinitions.insert({
    description: 'Deal follow-up',
    tag: 'deal-follow-up',
    captureRule: 'OPPORTUNITY',
    direction: 'START_DATE',
    createdAt: at,
    updatedAt: at,
    taskDefinitions: [
      {
        id: store.next(),
        description: 'Send proposal',
        daysAfterRule: 'TRACK_START',
        daysAfter: 1,
        displayOrder: 0,
        dayDelayRule: 'TRACK_DAYS',
        assigneeType: 'ENTITY_OWNER',
        categoryId: categoryIds[1] ?? null,
      },
      {
        id: store.next(),
        description: 'Follow-up call',
        daysAfterRule: 'LAST_TASK',
        daysAfter: 5,
        displayOrder: 1,
        dayDelayRule: 'TRACK_WORKDAYS',
        assigneeType: 'ENTITY_OWNER',
        categoryId: categoryIds[0] ?? null,
      },
    ],
  });
}

/** The one project board of the seeded account and its stages, at fixed ids below the store's sequence (1001 up). */
export const SEEDED_BOARD = { id: 100, name: 'Projects' } as const;
export const SEEDED_STAGES = [
  { id: 101, name: 'Planned' },
  { id: 102, name: 'In progress' },
  { id: 103, name: 'Review' },
  { id: 104, name: 'Done' },
] as const;
export const SEEDED_LOST_REASONS = ['Price', 'Competitor', 'No budget', 'Timing', 'No decision'] as const;

/**
 * Seeds the project board with its stages and the lost reasons where the account has none: a new
 * account, or one saved by a sandbox that kept them fixed in code (the interface cannot delete
 * them, so an empty list means they were never stored).
 */
export function seedAccountLists(store: Store, now: Date): void {
  const at = timestamp(now);
  const stamped = { createdAt: at, updatedAt: at };
  if (store.boards.size === 0) {
    store.boards.put({ ...SEEDED_BOARD, description: null, ...stamped });
    SEEDED_STAGES.forEach((stage, displayOrder) =>
      store.stages.put({ ...stage, boardId: SEEDED_BOARD.id, description: null, displayOrder, ...stamped }),
    );
  }
  if (store.lostReasons.size === 0) {
    SEEDED_LOST_REASONS.forEach((name, index) =>
      store.lostReasons.put({ id: 111 + index, name, includedForConversion: true, ...stamped }),
    );
  }
}
