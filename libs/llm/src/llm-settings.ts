import { Type, type Static } from '@sinclair/typebox';
import type { KV } from '@nats-io/kv';
import { DistributedSemaphore } from '@hermes/semaphore';
import { LlmClient, type ModelRole, type RoleEndpoint } from './llm-client.js';
import { PoolConfig, PoolResolver } from './llm-pools.js';
import { semaphorePermits } from './semaphore-permits.js';
import { observePools } from './llm-metrics.js';
import { reportPoolProfiles } from './pool-profiles.js';

/** LLM settings shared by every service that calls a model; spread into a service's settings. */
export const llmSettings = {
  OPENAI_BASE_URL: Type.String({ default: 'https://api.openai.com/v1', description: 'any OpenAI-compatible endpoint (vLLM, Ollama, LM Studio, ...)' }),
  OPENAI_API_KEY: Type.String({ default: 'not-set', description: 'API key for OPENAI_BASE_URL' }),
  HERMES_MODEL_WORKER: Type.String({ default: 'gpt-4o-mini', description: 'model that runs agent loops' }),
  HERMES_MODEL_PLANNER: Type.Optional(Type.String({ description: 'model that plans tasks (default: the worker model)' })),
  HERMES_MODEL_REVIEWER: Type.Optional(Type.String({ description: "model that reviews a task's subtask outputs (default: the worker model)" })),
  HERMES_MODEL_SUMMARIZER: Type.Optional(Type.String({ description: 'model that summarises (default: the worker model)' })),
  HERMES_MODEL_EMBEDDER: Type.String({ default: 'text-embedding-3-small', description: 'embedding model' }),
  HERMES_PLANNER_BASE_URL: Type.Optional(Type.String()),
  HERMES_PLANNER_API_KEY: Type.Optional(Type.String()),
  HERMES_REVIEWER_BASE_URL: Type.Optional(Type.String()),
  HERMES_REVIEWER_API_KEY: Type.Optional(Type.String()),
  HERMES_SUMMARIZER_BASE_URL: Type.Optional(Type.String()),
  HERMES_SUMMARIZER_API_KEY: Type.Optional(Type.String()),
  HERMES_EMBEDDER_BASE_URL: Type.Optional(Type.String()),
  HERMES_EMBEDDER_API_KEY: Type.Optional(Type.String()),
  LLM_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 1000 }),
  LLM_HTTP_CLIENT: Type.Union([Type.Literal('undici'), Type.Literal('fetch')], {
    default: 'undici',
    description: "the openai SDK's HTTP client: undici (its request API, about half the CPU per call) or fetch (Node's global fetch, the SDK's default)",
  }),
  LLM_MAX_RETRIES: Type.Integer({ default: 2, minimum: 0, maximum: 10, description: 'retries of retryable LLM errors, each through a new permit' }),
  LLM_KEEP_REASONING: Type.Boolean({
    default: false,
    description:
      "keep a reasoning model's thinking (reasoning_content, reasoning or inline <think>) as `detail.reasoning` on llm_call step events; it is never part of the answer or the session either way",
  }),
  LLM_POOLS: Type.Array(PoolConfig, {
    default: [],
    description: 'JSON array of { name, models?, base_url?, capacity, tpm?, provider?, params?, context_tokens? }',
  }),
  LLM_DEFAULT_CAPACITY: Type.Integer({ default: 8, minimum: 0, description: 'calls in flight, cluster-wide, for a pool not in LLM_POOLS' }),
  LLM_DEFAULT_TPM: Type.Optional(Type.Integer({ minimum: 1, description: 'tokens per minute for a pool not in LLM_POOLS' })),
  LLM_PERMIT_LEASE_MS: Type.Integer({ default: 15_000, minimum: 500, description: 'a permit not renewed for this long (its process died) is given back' }),
  LLM_PERMIT_KEEP_MS: Type.Integer({
    default: 200,
    minimum: 0,
    description:
      'a permit released while nobody waits for its pool stays with the process this long for its next call (one KV write instead of two); given back at once when someone waits; 0 = off',
  }),
  LLM_PERMIT_TIMEOUT_MS: Type.Integer({ default: 120_000, minimum: 1, description: 'how long a call waits for a permit before llm_permit_timeout' }),
  LLM_PRIORITY_AGING_MS: Type.Integer({
    default: 30_000,
    minimum: 0,
    description: 'waiting this long for a permit raises a call by one priority level, so low-priority work never starves; 0 = no aging',
  }),
  LLM_BACKGROUND_MIN_SHARE: Type.Number({
    default: 0.1,
    minimum: 0,
    maximum: 1,
    description: "fraction of a pool's capacity (at least one permit) kept for background calls (memory extraction, summaries) while they wait",
  }),
  LLM_BACKGROUND_MAX_SHARE: Type.Number({
    default: 0.5,
    minimum: 0,
    maximum: 1,
    description: "fraction of a pool's capacity (at least one permit) background calls may hold at most, even with the pool otherwise idle",
  }),
};

export type LlmConfig = Static<ReturnType<typeof Type.Object<typeof llmSettings>>>;

type RoleSettings = Pick<LlmConfig, 'OPENAI_BASE_URL' | 'OPENAI_API_KEY' | 'HERMES_MODEL_WORKER'> &
  Partial<Pick<LlmConfig, Exclude<keyof LlmConfig, 'OPENAI_BASE_URL' | 'OPENAI_API_KEY' | 'HERMES_MODEL_WORKER'>>>;

/** Resolves each role's endpoint: role-specific settings win, the shared ones fill the rest. */
export function roleEndpoints(c: RoleSettings): Record<ModelRole, RoleEndpoint> {
  const worker = { baseUrl: c.OPENAI_BASE_URL, apiKey: c.OPENAI_API_KEY, model: c.HERMES_MODEL_WORKER };
  const role = (baseUrl: string | undefined, apiKey: string | undefined, model: string | undefined): RoleEndpoint => ({
    baseUrl: baseUrl ?? worker.baseUrl,
    apiKey: apiKey ?? worker.apiKey,
    model: model ?? worker.model,
  });
  return {
    worker,
    planner: role(c.HERMES_PLANNER_BASE_URL, c.HERMES_PLANNER_API_KEY, c.HERMES_MODEL_PLANNER),
    reviewer: role(c.HERMES_REVIEWER_BASE_URL, c.HERMES_REVIEWER_API_KEY, c.HERMES_MODEL_REVIEWER),
    summarizer: role(c.HERMES_SUMMARIZER_BASE_URL, c.HERMES_SUMMARIZER_API_KEY, c.HERMES_MODEL_SUMMARIZER),
    embedder: role(c.HERMES_EMBEDDER_BASE_URL, c.HERMES_EMBEDDER_API_KEY, c.HERMES_MODEL_EMBEDDER),
  };
}

/**
 * The LLM client every service uses: role endpoints from config, and every call through the
 * cluster-wide semaphore kept in `kv` (the `<prefix>_llm_semaphore` bucket).
 */
export async function openLlmClient(c: LlmConfig, kv: KV, o: { service?: string } = {}): Promise<{ llm: LlmClient; close(): Promise<void> }> {
  const pools = new PoolResolver(c.LLM_POOLS, { capacity: c.LLM_DEFAULT_CAPACITY, tpm: c.LLM_DEFAULT_TPM ?? null });
  const sem = await DistributedSemaphore.open({
    kv,
    poolSettings: (p) => pools.settingsFor(p),
    leaseMs: c.LLM_PERMIT_LEASE_MS,
    keepMs: c.LLM_PERMIT_KEEP_MS,
    policy: { agingMs: c.LLM_PRIORITY_AGING_MS, backgroundMinShare: c.LLM_BACKGROUND_MIN_SHARE, backgroundMaxShare: c.LLM_BACKGROUND_MAX_SHARE },
  });
  observePools(kv);
  const llm = new LlmClient({
    roles: roleEndpoints(c),
    pools,
    permits: semaphorePermits(sem),
    timeoutMs: c.LLM_TIMEOUT_MS,
    maxRetries: c.LLM_MAX_RETRIES,
    httpClient: c.LLM_HTTP_CLIENT,
    permitTimeoutMs: c.LLM_PERMIT_TIMEOUT_MS,
    keepReasoning: c.LLM_KEEP_REASONING,
  });
  await llm.detectContextWindows();
  // What `hermes llm status` shows of each pool's server.
  await reportPoolProfiles(llm, kv, o.service ?? 'unknown');
  return { llm, close: () => sem.close() };
}
