import type { OAuthClientRec, UserRec } from './model.ts';

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * Headers of the HTML pages: never cached, never framed (a framed consent page invites
 * clickjacking), and no scripts at all.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
};

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
.note { background: #fff7d6; border: 1px solid #e6d27a; padding: .5rem .75rem; }
button { font-size: 1rem; padding: .4rem 1.2rem; margin-right: .5rem; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}

const SCOPE_TEXT: Record<string, string> = {
  read: 'read your records',
  write: 'create, change and delete your records',
  user_preference: 'read and change your user preferences',
};

/** The fields the consent form posts back; the decision comes from the button pressed. */
export interface ConsentFields {
  response_type: string;
  client_id: string;
  redirect_uri: string;
  scope: string;
  state: string | undefined;
}

/** The approve/deny page shown for a valid authorisation request. */
export function renderConsentPage(client: OAuthClientRec, user: UserRec, fields: ConsentFields): string {
  const hidden = Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const abilities = fields.scope
    .split(' ')
    .map((part) => `<li>${escapeHtml(SCOPE_TEXT[part] ?? part)}</li>`)
    .join('\n');
  return layout(
    'Authorise application',
    `<h1>Authorise ${escapeHtml(client.name)}</h1>
<p><strong>${escapeHtml(client.name)}</strong> asks for access to the sandbox account. It will be able to:</p>
<ul>
${abilities}
</ul>
<p class="note">This is the crm-ferry sandbox. It has no login: whoever approves here approves as the
account's Administrator, <strong>${escapeHtml(user.name)}</strong> (${escapeHtml(user.username)}).</p>
<p>After your choice you will be sent to <code>${escapeHtml(fields.redirect_uri)}</code>.</p>
<form method="post" action="/oauth/authorise">
${hidden}
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** The page shown instead of a redirect when the client or its redirect URI cannot be trusted. */
export function renderErrorPage(problem: string): string {
  return layout(
    'Authorisation failed',
    `<h1>This authorisation request cannot be completed</h1>
<p>${escapeHtml(problem)}</p>
<p>You have not been sent back to the application, because its address could not be verified.
Tell the application's developer about this error.</p>`,
  );
}
