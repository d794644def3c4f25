import { FerryError } from '../errors/index.ts';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|::1)$/i;

/** Whether a URL's host name is this machine's loopback interface (what the sandbox listens on). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

/**
 * The one transport rule for every request that carries a secret (an API token, a client secret,
 * an authorisation code, a refresh token): it goes over https, or over plain http only to a
 * loopback address, where nothing leaves the machine. Checked before anything is sent or opened,
 * by the API transport and by every OAuth call (token exchange, refresh, revoke, login), so every
 * command refuses the same way: `CONFIG_INSECURE_TRANSPORT`, exit code 2.
 */
export function checkSecureTransport(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new FerryError('CONFIG_INVALID', `the base address ${JSON.stringify(baseUrl)} is not a URL`, {
      hint: 'Give it as https://YOUR-ACCOUNT.example.com (--base-url or CRM_FERRY_BASE_URL).',
    });
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return url;
  throw new FerryError(
    'CONFIG_INSECURE_TRANSPORT',
    `refusing to send credentials over ${url.protocol}// to ${url.hostname}: they would travel in clear`,
    {
      hint: 'Use the https:// address of the service; plain http is allowed only to a loopback address (the sandbox).',
    },
  );
}
