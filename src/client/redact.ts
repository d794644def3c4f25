/**
 * Keeps secrets out of logs, errors and files. Every text the client puts into an error or a log
 * line passes through a redactor that knows the secrets in use.
 */
export class Redactor {
  private readonly secrets = new Set<string>();

  /** Registers a secret (token, refresh token, client secret). Short values are ignored: too many false hits. */
  add(secret: string | null | undefined): void {
    if (secret && secret.length >= 6) this.secrets.add(secret);
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.secrets) {
      if (result.includes(secret)) result = result.split(secret).join('[REDACTED]');
    }
    // Bearer and Basic headers and token-looking query or body fields, even for secrets not registered.
    return (
      result
        .replace(/(Bearer\s+)[^\s"',]+/gi, '$1[REDACTED]')
        // Base64 of `user:password`; a word after "Basic" in a sentence is shorter.
        .replace(/(Basic\s+)[A-Za-z0-9+/]{16,}={0,2}/g, '$1[REDACTED]')
        .replace(
          /((?:access_token|refresh_token|client_secret|token)["']?\s*[=:]\s*["']?)[^\s"'&,}]+/gi,
          '$1[REDACTED]',
        )
    );
  }
}
