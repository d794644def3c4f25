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
import { type Caller, callerOf, type SandboxContext } from '../context.ts';
import { notFound, paginate, parseId } from '../http.ts';
import type { UserRec } from '../model.ts';
import { teamSummary, userPictureURL } from '../serialize.ts';

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

/**
 * A user as `/users` shows them. Beyond the spec, the fields live answers of the service carry:
 * `loggedIn` (true for the user of the token asking, whose `lastLoginAt` is then when that token
 * was issued; the sandbox keeps no other logins), the account's settings `currency`, `timezone` and
 * `locale` (the sandbox's one account: GBP, UTC as `GET /site` says, en_GB), `status`
 * (ACTIVE), `deleted` (false: the sandbox removes no user), `taskReminder` (false) and `party`
 * (the user's own party record: null, the sandbox makes none).
 */
function userJson(ctx: SandboxContext, user: UserRec, caller: Caller): Record<string, unknown> {
  const loggedIn = user.id === caller.user.id;
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    // Not shown by the spec; given so that owners can be matched by email address, as exports
    // of other systems name them.
    email: user.email,
    pictureURL: userPictureURL(user),
    role: user.role,
    team: teamSummary(ctx, user.defaultTeamId),
    teams: user.teamIds.flatMap((id) => teamSummary(ctx, id) ?? []),
    currency: SANDBOX_USER_SETTINGS.currency,
    timezone: SANDBOX_USER_SETTINGS.timezone,
    locale: SANDBOX_USER_SETTINGS.locale,
    loggedIn,
    lastLoginAt: loggedIn ? (caller.token.issuedAt ?? null) : null,
    status: 'ACTIVE',
    deleted: false,
    taskReminder: false,
    party: null,
  };
}

/** The account settings every user of the sandbox's one account shows. */
export const SANDBOX_USER_SETTINGS = { currency: 'GBP', timezone: 'UTC', locale: 'en_GB' } as const;

/** Registers the country, currency, user and team routes. */
export function registerReferenceRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.get('/api/v2/countries', async () => ({ countries: listCountries() }));
  app.get('/api/v2/currencies', async () => ({ currencies: listCurrencies() }));

  app.get('/api/v2/users', async (request, reply) => ({
    users: paginate(request, reply, ctx.store.users.all()).map((user) => userJson(ctx, user, callerOf(request))),
  }));

  // Beyond the spec: the user the access token belongs to, as clients ask for to learn who they
  // act as. A static route, so it is matched before `/users/:userId`.
  app.get('/api/v2/users/current', async (request) => ({
    user: userJson(ctx, callerOf(request).user, callerOf(request)),
  }));

  app.get('/api/v2/users/:userId', async (request) => {
    const id = parseId((request.params as { userId: string }).userId, 'user');
    const user = ctx.store.users.get(id);
    if (!user) throw notFound(`no user with id ${id}`);
    return { user: userJson(ctx, user, callerOf(request)) };
  });

  app.get('/api/v2/teams', async (request, reply) => ({
    teams: paginate(request, reply, ctx.store.teams.all()).map((team) => ({ id: team.id, name: team.name })),
  }));
}
