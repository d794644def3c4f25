/**
 * The v2 wire shapes of parties, projects and opportunities, with their embeds. They show one
 * another (a project embeds its party and opportunity, a party its organisation), so they live
 * together here and every route module imports them from here, not from each other.
 */
import type { SandboxContext } from '../context.ts';
import type { KaseRec, MilestoneRec, OpportunityRec, PartyRec, WebsiteRec } from '../model.ts';
import { fieldsOf, opportunitySummary, partySummary, tagsOf, teamSummary, userSummary } from '../serialize.ts';
import { missingImportantFields } from './record-common.ts';

export const PARTY_EMBEDS = ['tags', 'fields', 'organisation', 'missingImportantFields'] as const;

export const KASE_EMBEDS = ['tags', 'fields', 'party', 'opportunity', 'missingImportantFields'] as const;

export const OPPORTUNITY_EMBEDS = ['tags', 'fields', 'party', 'milestone', 'missingImportantFields'] as const;

/**
 * Web services a website may name, as the legacy exports list them, with how the link is made
 * from a handle. A full `http(s)://` address is used as it is.
 */
export const WEBSITE_SERVICES: Record<string, ((address: string) => string) | null> = {
  URL: null,
  FEED: null,
  SKYPE: (a) => `skype:${a}?call`,
  TWITTER: (a) => `https://twitter.com/${a.replace(/^@/, '')}`,
  LINKED_IN: (a) => `https://www.linkedin.com/in/${a}`,
  FACEBOOK: (a) => `https://www.facebook.com/${a}`,
  XING: (a) => `https://www.xing.com/profile/${a}`,
  GOOGLE_PLUS: (a) => `https://plus.google.com/${a}`,
  FLICKR: (a) => `https://www.flickr.com/photos/${a}`,
  GITHUB: (a) => `https://github.com/${a}`,
  YOUTUBE: (a) => `https://www.youtube.com/${a}`,
  INSTAGRAM: (a) => `https://www.instagram.com/${a}`,
  PINTEREST: (a) => `https://www.pinterest.com/${a}`,
};

/** The link a website entry opens, derived from its service and address. */
export function websiteUrl(website: Pick<WebsiteRec, 'service' | 'address'>): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(website.address)) return website.address;
  const make = WEBSITE_SERVICES[website.service];
  return make ? make(website.address) : `http://${website.address}`;
}

export function forClassOf(type: PartyRec['type']): 'PERSON' | 'ORGANISATION' {
  return type === 'person' ? 'PERSON' : 'ORGANISATION';
}

/** The v2 wire shape of a record, with the embeds asked for. */
export function serializeParty(
  ctx: SandboxContext,
  record: PartyRec,
  embed: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { id: record.id, type: record.type, about: record.about };
  if (record.type === 'person') {
    out.title = record.title;
    out.firstName = record.firstName;
    out.lastName = record.lastName;
    out.jobTitle = record.jobTitle;
    const organisation = record.organisationId === null ? undefined : ctx.store.parties.get(record.organisationId);
    if (!organisation) out.organisation = null;
    else if (embed.has('organisation'))
      out.organisation = serializeParty(ctx, organisation, new Set(['tags', 'fields']));
    // `type` is the service's beyond the spec (live answers carry it): always organisation here.
    else
      out.organisation = {
        id: organisation.id,
        type: organisation.type,
        name: organisation.name,
        pictureURL: organisation.pictureURL,
      };
  } else {
    out.name = record.name;
  }
  Object.assign(out, {
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastContactedAt: record.lastContactedAt,
    owner: userSummary(ctx, record.ownerId),
    team: teamSummary(ctx, record.teamId),
    pictureURL: record.pictureURL,
    addresses: record.addresses.map((a) => ({ ...a })),
    phoneNumbers: record.phoneNumbers.map((p) => ({ ...p })),
    websites: record.websites.map((w) => ({
      id: w.id,
      type: w.type,
      service: w.service,
      address: w.address,
      url: websiteUrl(w),
    })),
    emailAddresses: record.emailAddresses.map((e) => ({ ...e })),
  });
  if (embed.has('tags')) out.tags = tagsOf(ctx, record.tagIds);
  if (embed.has('fields')) out.fields = fieldsOf(ctx, record.fields);
  if (embed.has('missingImportantFields')) {
    out.missingImportantFields = missingImportantFields(ctx, 'parties', record, forClassOf(record.type));
  }
  return out;
}

/** The v2 wire shape of a record, with the embeds asked for. */
export function serializeKase(
  ctx: SandboxContext,
  record: KaseRec,
  embed: ReadonlySet<string>,
): Record<string, unknown> {
  const party = ctx.store.parties.get(record.partyId);
  const stage = record.stageId === null ? undefined : ctx.store.stages.get(record.stageId);
  const out: Record<string, unknown> = {
    id: record.id,
    name: record.name,
    description: record.description,
    party: party && embed.has('party') ? serializeParty(ctx, party, new Set()) : partySummary(ctx, record.partyId),
    owner: userSummary(ctx, record.ownerId),
    team: teamSummary(ctx, record.teamId),
    status: record.status,
    stage: stage ? { id: stage.id, name: stage.name } : null,
    startOn: record.startOn,
    expectedCloseOn: record.expectedCloseOn,
    closedOn: record.closedOn,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastContactedAt: record.lastContactedAt,
  };
  const opportunity = record.opportunityId === null ? undefined : ctx.store.opportunities.get(record.opportunityId);
  if (embed.has('opportunity'))
    out.opportunity = opportunity ? serializeOpportunity(ctx, opportunity, new Set()) : null;
  else if (opportunity) out.opportunity = opportunitySummary(ctx, opportunity.id);
  if (embed.has('tags')) out.tags = tagsOf(ctx, record.tagIds);
  if (embed.has('fields')) out.fields = fieldsOf(ctx, record.fields);
  if (embed.has('missingImportantFields'))
    out.missingImportantFields = missingImportantFields(ctx, 'kases', record, null);
  return out;
}

/** The milestone as the milestone endpoints show it (spec 2.7), for `embed=milestone`. */
function serializeMilestone(ctx: SandboxContext, milestone: MilestoneRec): Record<string, unknown> {
  const pipeline = ctx.store.pipelines.get(milestone.pipelineId);
  const out: Record<string, unknown> = {
    id: milestone.id,
    name: milestone.name,
    ...(milestone.description === null ? {} : { description: milestone.description }),
    complete: milestone.complete,
    probability: milestone.probability,
  };
  if (!milestone.complete && milestone.daysUntilStale !== null) out.daysUntilStale = milestone.daysUntilStale;
  out.pipeline = pipeline ? { id: pipeline.id, name: pipeline.name } : null;
  out.createdAt = milestone.createdAt;
  out.updatedAt = milestone.updatedAt;
  return out;
}

/** The open milestone an opportunity was on last: its own while open, else the one it closed from (null when it never was open). */
function lastOpenMilestoneOf(
  ctx: SandboxContext,
  record: OpportunityRec,
  milestone: MilestoneRec | undefined,
): { id: number; name: string } | null {
  if (milestone && !milestone.complete) return { id: milestone.id, name: milestone.name };
  const last = record.lastOpenMilestoneId == null ? undefined : ctx.store.milestones.get(record.lastOpenMilestoneId);
  return last ? { id: last.id, name: last.name } : null;
}

/** The v2 wire shape of a record, with the embeds asked for. */
export function serializeOpportunity(
  ctx: SandboxContext,
  record: OpportunityRec,
  embed: ReadonlySet<string>,
): Record<string, unknown> {
  const party = ctx.store.parties.get(record.partyId);
  const milestone = ctx.store.milestones.get(record.milestoneId);
  const out: Record<string, unknown> = {
    id: record.id,
    name: record.name,
    description: record.description,
    owner: userSummary(ctx, record.ownerId),
    team: teamSummary(ctx, record.teamId),
    party: party && embed.has('party') ? serializeParty(ctx, party, new Set()) : partySummary(ctx, record.partyId),
    milestone: milestone
      ? embed.has('milestone')
        ? serializeMilestone(ctx, milestone)
        : { id: milestone.id, name: milestone.name }
      : null,
    lostReason: record.lostReason,
    value: record.value ? { amount: record.value.amount, currency: record.value.currency } : null,
    expectedCloseOn: record.expectedCloseOn,
    closedOn: record.closedOn,
    probability: record.probability,
    durationBasis: record.durationBasis,
    duration: record.duration,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastContactedAt: record.lastContactedAt,
    // Beyond the spec, as live answers carry them: the open milestone it was on last (its own
    // while open) and when its milestone last changed (its creation until then).
    lastOpenMilestone: lastOpenMilestoneOf(ctx, record, milestone),
    lastStageChangedAt: record.milestoneChangedAt ?? record.createdAt,
  };
  if (embed.has('tags')) out.tags = tagsOf(ctx, record.tagIds);
  if (embed.has('fields')) out.fields = fieldsOf(ctx, record.fields);
  if (embed.has('missingImportantFields'))
    out.missingImportantFields = missingImportantFields(ctx, 'opportunities', record, null);
  return out;
}
