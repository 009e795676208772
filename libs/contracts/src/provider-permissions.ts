import { renderNatsUserEntry } from './nats-user-entry.js';
import { subjectsFor } from './subjects.js';
import { MICRO_VERBS, microSubject } from './schemas/micro-services.js';

/** A tool provider's name: its announce and exec subjects end with it, so it is one plain NATS token. */
export const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The NATS user of a tool provider (every instance of the provider logs in as it). */
export const providerUserFor = (provider: string): string => `provider-${provider}`;

/** The inbox prefix a provider's user must connect with (`NATS_INBOX_PREFIX`). */
export const providerInboxPrefixFor = (provider: string): string => `_INBOX_provider-${provider}`;

/** The nats-server environment variable holding a provider user's password. */
export const providerPasswordVariableFor = (provider: string): string => `HERMES_NATS_PASSWORD_PROVIDER_${provider.toUpperCase().replace(/-/g, '_')}`;

/** Publish and subscribe allow-lists of one provider user. */
export interface ProviderPermissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
}

/**
 * What a provider's login may do: announce on its own subject only (so it cannot speak for
 * another provider), take calls on its own exec subject in its own queue group, hear the
 * toolbus's discover requests, be a NATS micro service under its own name, and answer calls (allow_responses). Nothing else: no JetStream
 * beyond the account check every client makes, no task events, no other provider's subjects.
 */
export function providerNatsPermissions(provider: string, opts: { prefix?: string } = {}): ProviderPermissions {
  if (!PROVIDER_NAME.test(provider)) throw new Error(`tool provider name "${provider}" must match ${PROVIDER_NAME}`);
  const s = subjectsFor(opts.prefix);
  return {
    publish: [s.toolProviderAnnounce(provider), '$JS.API.INFO'],
    subscribe: [
      `${s.toolExec(provider)} ${s.queueGroup(`tool-provider.${provider}`)}`,
      s.toolProvidersDiscover,
      `${providerInboxPrefixFor(provider)}.>`,
      // As a NATS micro service: the services API's bare verbs, its own name's (no other's), and its
      // endpoints in the API's default queue group `q` (Go micro before 1.24 knows no other).
      ...MICRO_VERBS.map((verb) => microSubject(verb)),
      `$SRV.*.${provider}`,
      `$SRV.*.${provider}.*`,
      `${s.toolExec(provider)} q`,
      `${s.toolExecEndpoint(provider, '*')} q`,
    ],
  };
}

/** The user entries of nats-server.conf for these providers (inside `users = [...]`), each line indented by `indent`. */
export function renderProviderUsers(providers: readonly string[], opts: { prefix?: string } = {}, indent = '    '): string[] {
  return [...new Set(providers)].map((provider) => {
    const p = providerNatsPermissions(provider, opts);
    const entry = { user: providerUserFor(provider), passwordVariable: providerPasswordVariableFor(provider), ...p, allowResponses: true };
    return renderNatsUserEntry(entry, indent);
  });
}
