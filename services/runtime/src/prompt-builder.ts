import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { RuntimeJob, SessionMessage } from '@hermes/contracts';

export const SYSTEM_PROMPT = [
  'You are a Hermes agent working for an internal team.',
  'Answer the goal as well as you can with what you are given.',
  'If information you would need is missing, say what is missing instead of inventing it.',
].join(' ');

/** The messages for one LLM call: system prompt, earlier session turns, then the goal and its inputs. */
export function buildPrompt(job: RuntimeJob, history: readonly SessionMessage[]): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [{ role: 'system', content: SYSTEM_PROMPT }];
  // Only plain conversational turns are replayed here; tool turns arrive with the tool loop.
  for (const m of history) {
    if ((m.role === 'user' || m.role === 'assistant') && m.content) messages.push({ role: m.role, content: m.content });
  }
  const inputs = job.inputs && Object.keys(job.inputs).length > 0 ? `\n\nInputs (JSON):\n${JSON.stringify(job.inputs, null, 2)}` : '';
  messages.push({ role: 'user', content: `${job.goal}${inputs}` });
  return messages;
}
