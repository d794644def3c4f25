import { FerryError } from '../errors/index.ts';

/** `text` with any `user:password@` of an address replaced, so that a message can quote it. */
function maskUserInfo(text: string): string {
  return text.replace(/\/\/[^/?#]*@/, '//***@');
}

/**
 * Checks a base address of the service (--base-url, CRM_FERRY_BASE_URL): an http(s) URL without a
 * user or password in it. The client sends a token, never the URL's credentials, so an address
 * carrying them would have them dropped in silence (and a password typed there is in the shell's
 * history): refused, and never quoted back.
 */
export function checkBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new FerryError('CONFIG_INVALID', `the base address ${JSON.stringify(maskUserInfo(baseUrl))} is not a URL`, {
      hint: 'Give it as https://YOUR-ACCOUNT.example.com (--base-url or CRM_FERRY_BASE_URL).',
    });
  }
  if (url.username !== '' || url.password !== '') {
    throw new FerryError(
      'CONFIG_INVALID',
      `the base address ${JSON.stringify(maskUserInfo(baseUrl))} holds a user name or password; crm-ferry does not send them`,
      {
        hint: 'Give the address without USER:PASSWORD@, and the credentials as a token (--token, CRM_FERRY_TOKEN) or an OAuth login (crm-ferry auth login).',
      },
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new FerryError('CONFIG_INVALID', `the base address ${JSON.stringify(baseUrl)} is not an http(s) address`, {
      hint: 'The service answers over https://.',
    });
  }
  return url;
}
