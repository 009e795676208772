/**
 * How each OpenAI-compatible server really answers, as far as Hermes' client can tell them apart.
 * Each trait is taken from the server's own docs or issue tracker (cited beside it), so the
 * scripted model can stand in for it in tests: `startScriptedLlm({ profile: 'ollama' })`.
 */
export type ScriptedProfile = 'openai' | 'ollama' | 'vllm' | 'llamacpp' | 'lmstudio';

export interface ContextOverflow {
  promptTokens: number;
  contextTokens: number;
}

export interface WireTraits {
  /** Where streamed and plain answers carry reasoning text; null: the server never returns it. */
  reasoningField: 'reasoning_content' | 'reasoning' | null;
  /** Whether a stream ends with the usage chunk when `stream_options.include_usage` asks for it. */
  streamUsage: boolean;
  /** `indexed`: a call's header then its argument pieces under its own index (OpenAI). `whole-at-0`: each call whole in one delta, all at index 0. */
  toolCallDeltas: 'indexed' | 'whole-at-0';
  /** The JSON body of an error answer. */
  errorBody(e: { status: number; message: string; type: string; code: string | null; extra?: Record<string, unknown> }): object;
  /** Status, message, type and extra fields of the server's "prompt too long" answer; absent: the server never says so. */
  overflow?: (o: ContextOverflow) => { status: number; message: string; type: string; code: string | null; extra?: Record<string, unknown> };
  /** Fields a `/v1/models` entry carries beyond id/object/created/owned_by. */
  modelFields(contextTokens: number): Record<string, unknown>;
  /** The native `POST /api/show` answer for a model, where the server has one (Ollama). */
  show?: (o: { model: string; contextTokens: number; numCtx?: number | undefined }) => Record<string, unknown>;
}

const openAiBody: WireTraits['errorBody'] = (e) => ({ error: { message: e.message, type: e.type, param: null, code: e.code, ...e.extra } });

const PROFILES: Record<ScriptedProfile, WireTraits> = {
  // platform.openai.com/docs/api-reference/chat: indexed deltas, usage chunk on include_usage,
  // `context_length_exceeded` with "This model's maximum context length is N tokens".
  openai: {
    reasoningField: null,
    streamUsage: true,
    toolCallDeltas: 'indexed',
    errorBody: openAiBody,
    overflow: (o) => ({
      status: 400,
      message: `This model's maximum context length is ${o.contextTokens} tokens. However, your messages resulted in ${o.promptTokens} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
    }),
    modelFields: () => ({}),
  },
  // Ollama's /v1: every streamed tool call whole at index 0, told apart by id (ollama/ollama#15457,
  // vercel/ai#14277; before that no index at all, #7881); no usage chunk before v0.5.2 (#4448);
  // thinking in `delta.reasoning` (since 0.9). An over-long prompt is truncated silently to the
  // window set server-side (num_ctx), never refused: this profile has no overflow answer.
  ollama: {
    reasoningField: 'reasoning',
    streamUsage: false,
    toolCallDeltas: 'whole-at-0',
    errorBody: (e) => ({ error: { message: e.message, type: e.type, param: null, code: e.code } }),
    modelFields: () => ({}),
    // Native API, docs.ollama.com/api (Show model details, POST /api/show {model}): the
    // Modelfile's parameters as text ("num_ctx 8192\nstop ..."), and model_info with the
    // architecture's trained window under `<general.architecture>.context_length`.
    show: (o) => ({
      modelfile: `FROM ${o.model}`,
      parameters: [...(o.numCtx ? [`num_ctx                        ${o.numCtx}`] : []), 'stop                           "<|im_end|>"'].join('\n'),
      template: '{{ .Prompt }}',
      details: { parent_model: '', format: 'gguf', family: 'qwen3', families: ['qwen3'], parameter_size: '8.2B', quantization_level: 'Q4_K_M' },
      model_info: {
        'general.architecture': 'qwen3',
        'general.parameter_count': 8190735360,
        'qwen3.context_length': o.contextTokens,
        'qwen3.embedding_length': 4096,
      },
      capabilities: ['completion', 'tools', 'thinking'],
      modified_at: '2025-05-01T00:00:00Z',
    }),
  },
  // vLLM: older releases answer errors with a bare `{"object":"error","message":...,"code":400}`
  // (vllm-project/vllm#4667), the overflow as "This model's maximum context length is N tokens.
  // However, you requested M tokens" (#20409); `/v1/models` reports `max_model_len`; reasoning in
  // `reasoning_content` (docs.vllm.ai features/reasoning_outputs, v0.7–0.8).
  vllm: {
    reasoningField: 'reasoning_content',
    streamUsage: true,
    toolCallDeltas: 'indexed',
    errorBody: (e) => ({ object: 'error', message: e.message, type: e.type, param: null, code: e.status }),
    overflow: (o) => ({
      status: 400,
      message: `This model's maximum context length is ${o.contextTokens} tokens. However, you requested ${o.promptTokens} tokens (${o.promptTokens} in the messages, 0 in the completion). Please reduce the length of the messages or completion.`,
      type: 'BadRequestError',
      code: null,
    }),
    modelFields: (contextTokens) => ({ max_model_len: contextTokens, root: 'scripted', parent: null }),
  },
  // llama.cpp's llama-server: `exceed_context_size_error` with n_prompt_tokens and n_ctx
  // (ggml-org/llama.cpp#15780, #19774); reasoning in `reasoning_content` (--reasoning-format deepseek).
  llamacpp: {
    reasoningField: 'reasoning_content',
    streamUsage: true,
    toolCallDeltas: 'indexed',
    errorBody: (e) => ({ error: { code: e.status, message: e.message, type: e.type, ...e.extra } }),
    overflow: (o) => ({
      status: 400,
      message: `request (${o.promptTokens} tokens) exceeds the available context size (${o.contextTokens} tokens), try increasing it`,
      type: 'exceed_context_size_error',
      code: null,
      extra: { n_prompt_tokens: o.promptTokens, n_ctx: o.contextTokens },
    }),
    modelFields: () => ({}),
  },
  // LM Studio: errors as `{"error": "<message>"}`, a string, and the overflow as "Trying to keep
  // the first N tokens when context the overflows" (lmstudio-ai/lmstudio-bug-tracker#237, #546).
  lmstudio: {
    reasoningField: 'reasoning_content',
    streamUsage: true,
    toolCallDeltas: 'indexed',
    errorBody: (e) => ({ error: e.message }),
    overflow: (o) => ({
      status: 400,
      message: `Trying to keep the first ${o.promptTokens} tokens when context the overflows. However, the model is loaded with context length of only ${o.contextTokens} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
      type: 'invalid_request_error',
      code: null,
    }),
    modelFields: () => ({}),
  },
};

export function wireTraits(profile: ScriptedProfile): WireTraits {
  return PROFILES[profile];
}

/** Every profile, for conformance suites that run the same test against each. */
export const SCRIPTED_PROFILES: readonly ScriptedProfile[] = Object.keys(PROFILES) as ScriptedProfile[];
