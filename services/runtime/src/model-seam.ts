import type { ToolCallReply, ToolCallRequest } from '@hermes/contracts';
import type { ChatRequest, ChatResult, LlmClient, ModelRole, PermitReservation } from '@hermes/llm';
import type { WaitOut } from './dependency-wait.js';

/** A chat request as the runtime makes it: the step it belongs to travels along, for recording and replay. */
export type StepChatRequest = ChatRequest & { step?: number };

/** What a job asks the model through: the LLM client, or a recorder or replayer in front of it. */
export interface ChatSeam {
  chat(req: StepChatRequest): Promise<ChatResult>;
  modelFor(role: ModelRole): string;
  reserve(role: Exclude<ModelRole, 'embedder'>): PermitReservation | undefined;
}

/** What a job calls tools through: the toolbus, or a recorder or replayer in front of it. */
export interface ToolSeam {
  call(req: ToolCallRequest, signal?: AbortSignal, waitOut?: WaitOut): Promise<ToolCallReply>;
}

/** The seams of one job. */
export interface JobSeams {
  llm: ChatSeam;
  tools: ToolSeam;
}

/** The LLM client itself, as a seam (a job that is neither recorded nor replayed). */
export function directChat(llm: LlmClient): ChatSeam {
  return llm;
}
