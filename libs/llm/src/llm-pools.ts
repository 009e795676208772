import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { ProviderName, RequestParams, providerForUrl, providerProfile, type ProviderProfile } from './provider-profiles.js';

/** One configured pool: which calls it covers and how many may run at once. */
export const PoolConfig = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    models: Type.Optional(Type.Array(Type.String(), { description: 'models this pool covers; absent = any' })),
    base_url: Type.Optional(Type.String({ description: 'endpoint this pool covers; absent = any' })),
    capacity: Type.Integer({ minimum: 0, description: 'calls in flight at once, cluster-wide' }),
    tpm: Type.Optional(Type.Integer({ minimum: 1, description: 'tokens per minute, cluster-wide' })),
    provider: Type.Optional(ProviderName),
    params: Type.Optional(
      Type.Object(
        {
          planner: Type.Optional(RequestParams),
          worker: Type.Optional(RequestParams),
          reviewer: Type.Optional(RequestParams),
          summarizer: Type.Optional(RequestParams),
        },
        { additionalProperties: false, description: 'request parameters per role, sent only where the provider takes them' },
      ),
    ),
    context_tokens: Type.Optional(
      Type.Record(Type.String(), Type.Integer({ minimum: 256 }), { description: "each model's context window in tokens (model name → tokens)" }),
    ),
  },
  { additionalProperties: false },
);
export type PoolConfig = Static<typeof PoolConfig>;

/** What a call to one endpoint for one role is made with. */
export interface CallSettings {
  provider: ProviderName;
  profile: ProviderProfile;
  params?: RequestParams;
  contextTokens?: number;
}

export interface PoolSettings {
  capacity: number;
  tpm?: number | null;
}

/**
 * Chooses the pool for a call: the first configured pool whose models and endpoint match, else
 * a default pool per endpoint, model and API key (so two keys never share a quota by accident).
 */
export class PoolResolver {
  private readonly settings = new Map<string, PoolSettings>();
  /** Pool names by endpoint, model and key: asked on every call, and a hash is not free. */
  private readonly names = new Map<string, string>();

  constructor(
    private readonly pools: readonly PoolConfig[],
    private readonly defaults: PoolSettings,
  ) {
    for (const p of pools) this.settings.set(p.name, { capacity: p.capacity, tpm: p.tpm ?? null });
  }

  poolFor(endpoint: { baseUrl: string; model: string; apiKey: string }): string {
    const id = `${endpoint.baseUrl}\u0000${endpoint.model}\u0000${endpoint.apiKey}`;
    let name = this.names.get(id);
    if (name === undefined) this.names.set(id, (name = this.resolve(endpoint)));
    return name;
  }

  private resolve(endpoint: { baseUrl: string; model: string; apiKey: string }): string {
    const match = this.pools.find(
      (p) => (!p.models || p.models.includes(endpoint.model)) && (!p.base_url || p.base_url.replace(/\/+$/, '') === endpoint.baseUrl.replace(/\/+$/, '')),
    );
    if (match) return match.name;
    const host = safeHost(endpoint.baseUrl);
    const key = createHash('sha256').update(endpoint.apiKey).digest('hex').slice(0, 8);
    const name = `${host}_${endpoint.model}_${key}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 120);
    if (!this.settings.has(name)) this.settings.set(name, this.defaults);
    return name;
  }

  /** How calls to the endpoint are made: the provider profile, the role's parameters and the model's window. */
  callSettings(endpoint: { baseUrl: string; model: string; apiKey: string }, role: string): CallSettings {
    const config = this.pools.find((p) => p.name === this.poolFor(endpoint));
    const provider = config?.provider ?? providerForUrl(endpoint.baseUrl);
    const params = (config?.params as Record<string, RequestParams | undefined> | undefined)?.[role];
    const contextTokens = config?.context_tokens?.[endpoint.model];
    return { provider, profile: providerProfile(provider), ...(params ? { params } : {}), ...(contextTokens ? { contextTokens } : {}) };
  }

  /** Settings for a pool name (the defaults for one this process has not resolved itself). */
  settingsFor(pool: string): PoolSettings {
    return this.settings.get(pool) ?? this.defaults;
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'endpoint';
  }
}
