/** Query parameters whose value is a credential: these belong in `headers`, never in a URL that ends up in logs. */
const SECRET_QUERY = /^(?:.*[-_])?(?:token|key|apikey|secret|password|passwd|pwd|auth|authorization|credential|credentials|signature|sig|session)$/i;
/** Environment variables whose value is a credential even when written in the config file itself. */
const SECRET_ENV = /token|key|secret|passw|pwd|credential|auth|cookie|session/i;
/** The scheme word of an Authorization value is no secret, and hiding it everywhere would garble messages. */
const AUTH_SCHEME = /^(?:bearer|basic|digest|token)$/i;
/** Shorter pieces are not searched for: redacting "1" or "on" would garble every message. */
const MIN_SECRET_CHARS = 6;

/**
 * Why an MCP server URL may not be used as written, or undefined: user info (`user:pass@`) and
 * credential-like query parameters (`?token=`, `?api_key=`) would be printed wherever the URL is
 * (transport errors, logs, status), so they are refused at load and sent as headers instead.
 */
export function urlCredentialProblem(url: URL): string | undefined {
  const where = url.username || url.password ? 'user info (user:pass@)' : [...url.searchParams.keys()].find((k) => SECRET_QUERY.test(k));
  if (where === undefined) return undefined;
  const what = where.startsWith('user info') ? where : `the query parameter "${where}"`;
  return `carries a credential in ${what}; URLs are printed in errors and logs, so send it as a header instead (headers: { Authorization: "Bearer \${TOKEN}" }, with the value from the environment), or through env for a stdio server`;
}

/**
 * The values of one server's config that must never be printed: every header value (and each word
 * of it, so "Bearer x" also hides a bare "x"), and the env values that came from `${VAR}` or whose
 * name says they are credentials.
 */
export function secretsOf(o: { headers?: Record<string, string>; env?: Record<string, string>; expanded?: readonly string[] }): string[] {
  const out = new Set<string>(o.expanded ?? []);
  for (const value of Object.values(o.headers ?? {})) {
    out.add(value);
    for (const word of value.split(/\s+/)) if (!AUTH_SCHEME.test(word)) out.add(word);
  }
  for (const [name, value] of Object.entries(o.env ?? {})) if (SECRET_ENV.test(name)) out.add(value);
  return [...out].filter((s) => s.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
}

/** Replaces every configured secret (as written, or URL-encoded) in a text with `***`. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    out = out.split(secret).join('***');
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join('***');
  }
  return out;
}

/** The same error with secrets taken out of its message and stack (pino prints both). */
export function redactError<E>(err: E, secrets: readonly string[]): E {
  if (!(err instanceof Error) || secrets.length === 0) return err;
  err.message = redactText(err.message, secrets);
  if (typeof err.stack === 'string') err.stack = redactText(err.stack, secrets);
  return err;
}
