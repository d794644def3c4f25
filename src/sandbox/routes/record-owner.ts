/** Owner and team of a party, project or opportunity: defaults and checks. */
import type { Caller, SandboxContext } from '../context.ts';
import type { UserRec } from '../model.ts';
import { Problems, type Body, isObject, readIdRef } from './request-body.ts';

function findUser(ctx: SandboxContext, value: unknown, field: string, problems: Problems): UserRec | null | undefined {
  if (value === null) return null;
  if (isObject(value) && typeof value.username === 'string' && value.id === undefined) {
    const wanted = value.username.toLowerCase();
    const user = ctx.store.users.all().find((u) => u.username.toLowerCase() === wanted);
    if (!user) problems.add(field, `no user with username ${JSON.stringify(value.username)}`);
    return user;
  }
  const id = readIdRef(value, field, problems);
  if (id === undefined || id === null) return undefined;
  const user = ctx.store.users.get(id);
  if (!user) problems.add(field, `no user with id ${id}`);
  return user;
}

function findTeam(ctx: SandboxContext, value: unknown, field: string, problems: Problems): number | null | undefined {
  if (value === null) return null;
  if (isObject(value) && typeof value.name === 'string' && value.id === undefined) {
    const wanted = value.name.toLowerCase();
    const team = ctx.store.teams.all().find((t) => t.name.toLowerCase() === wanted);
    if (!team) problems.add(field, `no team named ${JSON.stringify(value.name)}`);
    return team?.id;
  }
  const id = readIdRef(value, field, problems);
  if (id === undefined || id === null) return undefined;
  if (!ctx.store.teams.has(id)) problems.add(field, `no team with id ${id}`);
  return id;
}

/**
 * Works out owner and team from a create or update body. On create an absent owner is the
 * caller; on update it stays. A given owner without a team brings the owner's default team;
 * null sets none. `current` is null on create.
 */
export function resolveOwnerTeam(
  ctx: SandboxContext,
  body: Body,
  caller: Caller,
  problems: Problems,
  current: { ownerId: number | null; teamId: number | null } | null,
): { ownerId: number | null; teamId: number | null } {
  let ownerId = current ? current.ownerId : caller.user.id;
  let teamId = current ? current.teamId : null;
  const ownerGiven = body.owner !== undefined;
  if (ownerGiven) {
    const owner = findUser(ctx, body.owner, 'owner', problems);
    if (owner !== undefined) ownerId = owner === null ? null : owner.id;
    if (owner && body.team === undefined) teamId = owner.defaultTeamId;
  }
  if (body.team !== undefined) {
    const team = findTeam(ctx, body.team, 'team', problems);
    if (team !== undefined) teamId = team;
  }
  return { ownerId, teamId };
}
