import { Type, type Static } from '@sinclair/typebox';
import type { ModelRole, RoleEndpoint } from './llm-client.js';

/** LLM settings shared by every service that calls a model; spread into a service's settings. */
export const llmSettings = {
  OPENAI_BASE_URL: Type.String({ default: 'https://api.openai.com/v1', description: 'any OpenAI-compatible endpoint (vLLM, Ollama, LM Studio, ...)' }),
  OPENAI_API_KEY: Type.String({ default: 'not-set', description: 'API key for OPENAI_BASE_URL' }),
  HERMES_MODEL_WORKER: Type.String({ default: 'gpt-4o-mini', description: 'model that runs agent loops' }),
  HERMES_MODEL_PLANNER: Type.Optional(Type.String({ description: 'model that plans tasks (default: the worker model)' })),
  HERMES_MODEL_SUMMARIZER: Type.Optional(Type.String({ description: 'model that summarises (default: the worker model)' })),
  HERMES_PLANNER_BASE_URL: Type.Optional(Type.String()),
  HERMES_PLANNER_API_KEY: Type.Optional(Type.String()),
  HERMES_SUMMARIZER_BASE_URL: Type.Optional(Type.String()),
  HERMES_SUMMARIZER_API_KEY: Type.Optional(Type.String()),
  LLM_TIMEOUT_MS: Type.Integer({ default: 60_000, minimum: 1000 }),
  LLM_MAX_RETRIES: Type.Integer({ default: 2, minimum: 0, maximum: 10 }),
};

type LlmConfig = Static<ReturnType<typeof Type.Object<typeof llmSettings>>>;

/** Resolves each role's endpoint: role-specific settings win, the shared ones fill the rest. */
export function roleEndpoints(c: LlmConfig): Record<ModelRole, RoleEndpoint> {
  const worker = { baseUrl: c.OPENAI_BASE_URL, apiKey: c.OPENAI_API_KEY, model: c.HERMES_MODEL_WORKER };
  return {
    worker,
    planner: {
      baseUrl: c.HERMES_PLANNER_BASE_URL ?? worker.baseUrl,
      apiKey: c.HERMES_PLANNER_API_KEY ?? worker.apiKey,
      model: c.HERMES_MODEL_PLANNER ?? worker.model,
    },
    summarizer: {
      baseUrl: c.HERMES_SUMMARIZER_BASE_URL ?? worker.baseUrl,
      apiKey: c.HERMES_SUMMARIZER_API_KEY ?? worker.apiKey,
      model: c.HERMES_MODEL_SUMMARIZER ?? worker.model,
    },
  };
}
