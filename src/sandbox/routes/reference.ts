/**
 * Read-only reference lists: countries and currencies (spec 4.11), the account's users (spec 4.13),
 * the token's own user and teams (beyond the spec).
 *
 * Countries and currencies come from ISO data packages rather than typed-in lists, so they follow
 * the standards when the packages are updated. Both lists are built once, on first use.
 */
import type { FastifyInstance } from 'fastify';
import countryData from 'i18n-iso-countries';
import currencyData from 'currency-codes';
import currencySymbol from 'currency-symbol-map';
import { callerOf, type SandboxContext } from '../context.ts';
import { notFound, paginate, parseId } from '../http.ts';
import type { UserRec } from '../model.ts';
import { teamSummary } from '../serialize.ts';

export interface Country {
  alpha2Code: string;
  alpha3Code: string;
  numericCode: number;
  name: string;
}

export interface Currency {
  code: string;
  symbol: string;
  name: string;
}

let countries: Country[] | undefined;
let currencies: Currency[] | undefined;

/** ISO 3166-1 countries with English names, sorted by name. */
export function listCountries(): Country[] {
  countries ??= Object.entries(countryData.getAlpha2Codes())
    .map(([alpha2Code, alpha3Code]) => ({
      alpha2Code,
      alpha3Code,
      numericCode: Number(countryData.alpha2ToNumeric(alpha2Code)),
      name: countryData.getName(alpha2Code, 'en') ?? alpha2Code,
    }))
    .sort((a, b) => a.name.localeCompare(b.name, 'en'));
  return countries;
}

/**
 * ISO 4217 currencies sorted by code. Entries the standard lists only as placeholders (precious
 * metals, bond units, the testing and no-currency codes) are left out: their "countries" are the
 * standard's ZZ pseudo-entries, and no sale is priced in them. Without a known symbol, the code
 * stands in for it.
 */
export function listCurrencies(): Currency[] {
  currencies ??= currencyData.data
    .filter((entry) => !entry.countries.every((country) => /^zz\d/i.test(country)))
    .map((entry) => ({ code: entry.code, symbol: currencySymbol(entry.code) ?? entry.code, name: entry.currency }))
    .sort((a, b) => a.code.localeCompare(b.code));
  return currencies;
}

/** The picture of a user: the sandbox serves none, so it is a stable placeholder address. */
function pictureOf(user: UserRec): string {
  return `https://sandbox.invalid/avatars/users/${user.id}.png`;
}

function userJson(ctx: SandboxContext, user: UserRec): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    // Not shown by the spec; given so that owners can be matched by email address, as exports
    // of other systems name them.
    email: user.email,
    pictureURL: pictureOf(user),
    role: user.role,
    team: teamSummary(ctx, user.defaultTeamId),
    teams: user.teamIds.flatMap((id) => teamSummary(ctx, id) ?? []),
  };
}

/** Registers the country, currency, user and team routes. */
export function registerReferenceRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.get('/api/v2/countries', async () => ({ countries: listCountries() }));
  app.get('/api/v2/currencies', async () => ({ currencies: listCurrencies() }));

  app.get('/api/v2/users', async (request, reply) => ({
    users: paginate(request, reply, ctx.store.users.all()).map((user) => userJson(ctx, user)),
  }));

  // Beyond the spec: the user the access token belongs to, as clients ask for to learn who they
  // act as. A static route, so it is matched before `/users/:userId`.
  app.get('/api/v2/users/current', async (request) => ({ user: userJson(ctx, callerOf(request).user) }));

  app.get('/api/v2/users/:userId', async (request) => {
    const id = parseId((request.params as { userId: string }).userId, 'user');
    const user = ctx.store.users.get(id);
    if (!user) throw notFound(`no user with id ${id}`);
    return { user: userJson(ctx, user) };
  });

  app.get('/api/v2/teams', async (request, reply) => ({
    teams: paginate(request, reply, ctx.store.teams.all()).map((team) => ({ id: team.id, name: team.name })),
  }));
}
