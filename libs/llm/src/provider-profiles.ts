import { Type, type Static } from '@sinclair/typebox';
import { GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI, GEN_AI_PROVIDER_NAME_VALUE_OPENAI } from '@opentelemetry/semantic-conventions/incubating';

/** Which kind of server a pool talks to (`provider` in LLM_POOLS). */
export const ProviderName = Type.Union(
  [
    Type.Literal('openai'),
    Type.Literal('azure-openai'),
    Type.Literal('vllm'),
    Type.Literal('ollama'),
    Type.Literal('lmstudio'),
    Type.Literal('llamacpp'),
    Type.Literal('generic'),
  ],
  { description: 'the kind of OpenAI-compatible server: says which request parameters it takes (see docs/llm.md)' },
);
export type ProviderName = Static<typeof ProviderName>;

/** Request parameters a role can set per pool; each is sent only where the profile takes it. */
export const RequestParams = Type.Object(
  {
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    seed: Type.Optional(Type.Integer()),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    stop: Type.Optional(Type.Array(Type.String(), { maxItems: 4 })),
  },
  { additionalProperties: false },
);
export type RequestParams = Static<typeof RequestParams>;
type ParamName = keyof RequestParams;

/** What one kind of server supports, as its docs say. */
export interface ProviderProfile {
  /** `gen_ai.provider.name` on spans and metrics: a well-known value of the GenAI conventions where one exists. */
  providerName: string;
  /** Asks for the usage chunk (`stream_options.include_usage`); usage is counted when none comes either way. */
  streamUsage: boolean;
  /** Honours `tool_choice` (Hermes does not rely on it: Ollama ignores it). */
  toolChoice: boolean;
  /** `response_format` kinds it takes, best first. */
  responseFormats: readonly ('json_schema' | 'json_object')[];
  /** Where a reasoning model's thinking comes (the client reads every one of these and inline `<think>`). */
  reasoning: readonly ('reasoning_content' | 'reasoning' | 'think_tags')[];
  /** The request parameters it takes. */
  params: ReadonlySet<ParamName>;
}

const ALL: ReadonlySet<ParamName> = new Set(['temperature', 'top_p', 'max_tokens', 'seed', 'parallel_tool_calls', 'stop']);
const NO_PARALLEL: ReadonlySet<ParamName> = new Set(['temperature', 'top_p', 'max_tokens', 'seed', 'stop']);

// From each server's OpenAI-compatibility docs: platform.openai.com (chat API), learn.microsoft.com
// (Azure OpenAI reference), docs.vllm.ai (OpenAI-compatible server, structured outputs), Ollama's
// docs/openai.md (no parallel_tool_calls, tool_choice ignored), lmstudio.ai/docs (OpenAI
// compatibility, structured output), llama.cpp tools/server/README.md.
const PROFILES: Record<ProviderName, ProviderProfile> = {
  openai: {
    providerName: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
    streamUsage: true,
    toolChoice: true,
    responseFormats: ['json_schema', 'json_object'],
    reasoning: [],
    params: ALL,
  },
  'azure-openai': {
    providerName: GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
    streamUsage: true,
    toolChoice: true,
    responseFormats: ['json_schema', 'json_object'],
    reasoning: [],
    params: ALL,
  },
  vllm: {
    providerName: 'vllm',
    streamUsage: true,
    toolChoice: true,
    responseFormats: ['json_schema', 'json_object'],
    reasoning: ['reasoning_content', 'reasoning', 'think_tags'],
    params: ALL,
  },
  ollama: {
    providerName: 'ollama',
    streamUsage: true,
    toolChoice: false,
    responseFormats: ['json_schema', 'json_object'],
    reasoning: ['reasoning', 'think_tags'],
    params: NO_PARALLEL,
  },
  lmstudio: {
    providerName: 'lmstudio',
    streamUsage: true,
    toolChoice: true,
    responseFormats: ['json_schema'],
    reasoning: ['reasoning_content', 'think_tags'],
    params: NO_PARALLEL,
  },
  llamacpp: {
    providerName: 'llamacpp',
    streamUsage: true,
    toolChoice: true,
    responseFormats: ['json_schema', 'json_object'],
    reasoning: ['reasoning_content', 'think_tags'],
    params: ALL,
  },
  // Any other OpenAI-compatible endpoint: only what nearly every server takes.
  generic: {
    providerName: 'openai_compatible',
    streamUsage: true,
    toolChoice: false,
    responseFormats: [],
    reasoning: ['reasoning_content', 'reasoning', 'think_tags'],
    params: new Set(['temperature', 'top_p', 'max_tokens', 'stop']),
  },
};

export function providerProfile(name: ProviderName): ProviderProfile {
  return PROFILES[name];
}

/** The provider an endpoint not in any configured pool is taken for: OpenAI and Azure by host, else generic. */
export function providerForUrl(baseUrl: string): ProviderName {
  let host = '';
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return 'generic';
  }
  if (host === 'api.openai.com') return 'openai';
  if (host.endsWith('.openai.azure.com')) return 'azure-openai';
  return 'generic';
}

/** The parameters of `params` that the profile takes; the rest are dropped (and listed, for the span). */
export function supportedParams(profile: ProviderProfile, params: RequestParams | undefined): { sent: Partial<RequestParams>; dropped: string[] } {
  const sent: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(params ?? {})) {
    if (v === undefined) continue;
    if (profile.params.has(k as ParamName)) sent[k] = v;
    else dropped.push(k);
  }
  return { sent: sent as Partial<RequestParams>, dropped };
}
