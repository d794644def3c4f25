/**
 * Wire shapes shared by several resources: user, party, opportunity and project summaries, tags
 * and custom field values. Each resource module serialises its own full records with these.
 */
import type { SandboxContext } from './context.ts';
import type { FieldValueRec, PartyRec, UserRec } from './model.ts';

/** The picture of a user: the sandbox serves none, so it is a stable placeholder address. */
export function userPictureURL(user: UserRec): string {
  return `https://sandbox.invalid/avatars/users/${user.id}.png`;
}

/**
 * A user as a record names its owner or creator. `pictureURL` and `deleted` are the service's,
 * beyond the spec (live answers carry them); the sandbox removes no user, so `deleted` is false.
 */
export function userSummary(
  ctx: SandboxContext,
  userId: number | null,
): { id: number; username: string; name: string; pictureURL: string; deleted: boolean } | null {
  if (userId === null) return null;
  const user = ctx.store.users.get(userId);
  return user
    ? { id: user.id, username: user.username, name: user.name, pictureURL: userPictureURL(user), deleted: false }
    : null;
}

export function teamSummary(ctx: SandboxContext, teamId: number | null): { id: number; name: string } | null {
  if (teamId === null) return null;
  const team = ctx.store.teams.get(teamId);
  return team ? { id: team.id, name: team.name } : null;
}

export function partySummaryOf(party: PartyRec): Record<string, unknown> {
  return party.type === 'person'
    ? {
        id: party.id,
        type: party.type,
        firstName: party.firstName,
        lastName: party.lastName,
        pictureURL: party.pictureURL,
      }
    : { id: party.id, type: party.type, name: party.name, pictureURL: party.pictureURL };
}

export function partySummary(ctx: SandboxContext, partyId: number | null): Record<string, unknown> | null {
  if (partyId === null) return null;
  const party = ctx.store.parties.get(partyId);
  return party ? partySummaryOf(party) : null;
}

export function opportunitySummary(ctx: SandboxContext, id: number | null): { id: number; name: string } | null {
  if (id === null) return null;
  const opportunity = ctx.store.opportunities.get(id);
  return opportunity ? { id: opportunity.id, name: opportunity.name } : null;
}

export function kaseSummary(ctx: SandboxContext, id: number | null): { id: number; name: string } | null {
  if (id === null) return null;
  const kase = ctx.store.kases.get(id);
  return kase ? { id: kase.id, name: kase.name } : null;
}

export function tagsOf(
  ctx: SandboxContext,
  tagIds: readonly number[],
): Array<{ id: number; name: string; dataTag: boolean }> {
  return tagIds.flatMap((id) => {
    const tag = ctx.store.tags.get(id);
    return tag ? [{ id: tag.id, name: tag.name, dataTag: tag.dataTag }] : [];
  });
}

export function fieldsOf(ctx: SandboxContext, fields: readonly FieldValueRec[]): Array<Record<string, unknown>> {
  return fields.flatMap((field) => {
    const definition = ctx.store.fieldDefinitions.get(field.definitionId);
    if (!definition) return [];
    return [
      {
        id: field.id,
        definition: { id: definition.id, name: definition.name },
        value: field.value,
        tagId: definition.tagId,
      },
    ];
  });
}
