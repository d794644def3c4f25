/**
 * Records as the sandbox stores them. They are close to the v2 shapes of the interface but hold
 * references as ids (`ownerId`, `partyId`, ...) so that one record serves the v2 and v1 views and
 * renames show everywhere. Route modules turn them into wire shapes (see serialize.ts).
 * Every record is plain JSON so the whole state can be written to a file.
 */

export type EntityKind = 'parties' | 'opportunities' | 'kases';

export interface UserRec {
  id: number;
  username: string;
  name: string;
  email: string;
  role: 'Administrator' | 'User';
  defaultTeamId: number | null;
  teamIds: number[];
}

export interface TeamRec {
  id: number;
  name: string;
}

export interface TagRec {
  id: number;
  entity: EntityKind;
  name: string;
  /** What the tag is for, as its creator wrote it; null when none was given. */
  description: string | null;
  /** A data tag carries custom fields of its own. */
  dataTag: boolean;
}

export type FieldType = 'Text' | 'List' | 'Date' | 'Boolean';

export interface FieldDefinitionRec {
  id: number;
  entity: EntityKind;
  name: string;
  type: FieldType;
  /** For List fields, the allowed values; for Text, an optional regular expression (as text). */
  options: string[] | null;
  pattern: string | null;
  /** The data tag this field belongs to, or null for a plain custom field. */
  tagId: number | null;
  important: boolean;
  /** Parties only: which kind of party the field is shown for, null for both. */
  forClass: 'PERSON' | 'ORGANISATION' | null;
  displayOrder: number;
}

export interface FieldValueRec {
  /** Id of this field instance on the record. */
  id: number;
  definitionId: number;
  /** Dates as `YYYY-MM-DD`, booleans as booleans, everything else as text. */
  value: string | boolean;
}

export interface AddressRec {
  id: number;
  type: string | null;
  street: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  country: string | null;
}

export interface PhoneRec {
  id: number;
  type: string | null;
  number: string;
}

export interface EmailRec {
  id: number;
  type: string | null;
  address: string;
}

export interface WebsiteRec {
  id: number;
  type: string | null;
  service: string;
  address: string;
}

interface Stamped {
  id: number;
  createdAt: string;
  updatedAt: string;
}

export interface PartyRec extends Stamped {
  type: 'person' | 'organisation';
  title: string | null;
  firstName: string | null;
  lastName: string | null;
  jobTitle: string | null;
  /** Organisations only. */
  name: string | null;
  about: string | null;
  organisationId: number | null;
  ownerId: number | null;
  teamId: number | null;
  lastContactedAt: string | null;
  pictureURL: string;
  addresses: AddressRec[];
  phoneNumbers: PhoneRec[];
  emailAddresses: EmailRec[];
  websites: WebsiteRec[];
  tagIds: number[];
  fields: FieldValueRec[];
  /** Ids of users who can no longer see this record (for the restricted lists). */
  restrictedFor: number[];
}

/** What a project and an opportunity share: named work for a party, with an owner or team, tags and fields. */
export interface PartyWorkRec extends Stamped {
  name: string;
  description: string | null;
  partyId: number;
  /** Additional contacts. */
  partyIds: number[];
  ownerId: number | null;
  teamId: number | null;
  lastContactedAt: string | null;
  tagIds: number[];
  fields: FieldValueRec[];
  /** Ids of users who can no longer see this record (for the restricted lists). */
  restrictedFor: number[];
}

export interface KaseRec extends PartyWorkRec {
  status: 'OPEN' | 'CLOSED';
  opportunityId: number | null;
  stageId: number | null;
  startOn: string | null;
  expectedCloseOn: string | null;
  closedOn: string | null;
}

export interface OpportunityRec extends PartyWorkRec {
  milestoneId: number;
  lostReason: string | null;
  value: { amount: number; currency: string } | null;
  expectedCloseOn: string | null;
  closedOn: string | null;
  probability: number;
  durationBasis: string;
  duration: number | null;
  /** When its milestone last changed; absent on records written before it was kept (their creation stands in). */
  milestoneChangedAt?: string;
  /** The open milestone it was on before moving to a complete one; absent or null when none is known. */
  lastOpenMilestoneId?: number | null;
}

export interface AttachmentRec {
  id: number;
  filename: string;
  contentType: string;
  size: number;
  /** Key of the bytes in the store's blob table. */
  blobId: string;
}

export interface ParticipantRec {
  id: number;
  address: string;
  name: string;
  role: string;
}

export interface EntryRec extends Stamped {
  type: 'note' | 'email' | 'task';
  content: string;
  subject: string | null;
  creatorId: number;
  activityTypeId: number | null;
  entryAt: string;
  partyId: number | null;
  kaseId: number | null;
  opportunityId: number | null;
  /** Emails: every party the email is filed on. */
  partyIds: number[];
  attachments: AttachmentRec[];
  participants: ParticipantRec[];
}

export interface UploadRec {
  token: string;
  filename: string;
  contentType: string;
  size: number;
  blobId: string;
  createdAt: string;
}

export interface TaskCategoryRec {
  id: number;
  name: string;
  colour: string;
}

export interface TaskRec extends Stamped {
  description: string;
  detail: string | null;
  categoryId: number | null;
  status: 'OPEN' | 'COMPLETED' | 'PENDING';
  partyId: number | null;
  opportunityId: number | null;
  kaseId: number | null;
  ownerId: number | null;
  dueOn: string | null;
  dueTime: string | null;
  completedAt: string | null;
  trackId: number | null;
  repeat: { interval: number; frequency: string; on: string | null } | null;
}

export interface PipelineRec extends Stamped {
  name: string;
  description: string | null;
  archived: boolean;
}

export interface MilestoneRec extends Stamped {
  pipelineId: number;
  name: string;
  description: string | null;
  probability: number;
  complete: boolean;
  daysUntilStale: number | null;
  displayOrder: number;
}

export interface TaskDefinitionRec {
  id: number;
  description: string;
  daysAfterRule: 'TRACK_START' | 'LAST_TASK';
  daysAfter: number;
  displayOrder: number;
  dayDelayRule: 'TRACK_DAYS' | 'TRACK_WORKDAYS' | 'TRACK_WEEKS';
  assigneeType: string;
  categoryId: number | null;
}

export interface TrackDefinitionRec extends Stamped {
  description: string;
  tag: string;
  captureRule: string;
  direction: string;
  taskDefinitions: TaskDefinitionRec[];
}

export interface TrackRec extends Stamped {
  description: string;
  direction: string;
  trackDateOn: string;
  definitionId: number;
  partyId: number | null;
  opportunityId: number | null;
  kaseId: number | null;
  taskIds: number[];
}

/** A project board: the stages a project moves through. Listed, not written, by the interface. */
export interface BoardRec {
  id: number;
  name: string;
  description: string | null;
  /** Stamps of the seeded lists; absent in a state saved before they were kept. */
  createdAt?: string;
  updatedAt?: string;
}

export interface StageRec {
  id: number;
  boardId: number;
  name: string;
  description: string | null;
  /** Position on its board; a new project starts on the first stage of the first board. */
  displayOrder: number;
  createdAt?: string;
  updatedAt?: string;
}

/** One of the account's reasons an opportunity was lost. */
export interface LostReasonRec {
  id: number;
  name: string;
  /** Whether opportunities lost for this reason count in the conversion rate. */
  includedForConversion: boolean;
  createdAt?: string;
  updatedAt?: string;
}

export interface ActivityTypeRec {
  id: number;
  name: string;
  iconId: string;
  updateLastContacted: boolean;
}

export interface JobRec {
  id: string;
  action: string;
  status: 'in_progress' | 'completed';
  progress: number;
  createdAt: string;
  /** When the job completes (the scheduled work is applied on the first read after this time). */
  dueAt: string;
  /** What to apply when the job completes. */
  target: { table: 'parties' | 'entries'; id: number };
}

export interface DeletedRec {
  id: number;
  deletedAt: string;
}

/** Tokens the sandbox accepts. Only hashes would be kept by a real service; the sandbox keeps values. */
export interface AccessTokenRec {
  token: string;
  userId: number;
  scope: string[];
  /** ISO timestamp, or null for personal tokens that never expire. */
  expiresAt: string | null;
  kind: 'personal' | 'oauth';
  clientId: string | null;
  /** The refresh token this access token was issued with (OAuth only). */
  refreshToken: string | null;
  /** When it was issued (a personal token: when the sandbox took it); absent in a state saved before it was kept. */
  issuedAt?: string;
}

export interface RefreshTokenRec {
  token: string;
  userId: number;
  clientId: string;
  scope: string[];
  revoked: boolean;
}

export interface AuthCodeRec {
  code: string;
  clientId: string;
  redirectUri: string;
  userId: number;
  scope: string[];
  expiresAt: string;
  used: boolean;
}

export interface OAuthClientRec {
  clientId: string;
  /** Empty for installed applications. */
  clientSecret: string;
  redirectUri: string;
  name: string;
}
