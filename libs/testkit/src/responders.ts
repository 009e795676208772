import type { ChatMessage, ChatRequestBody, Responder } from './scripted-response.js';

/** Text of a message, with multi-part content joined. */
export function messageText(message: ChatMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

/** Text of the last `user` message, or '' when there is none. */
export function lastUserMessageText(body: ChatRequestBody): string {
  const messages = body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return messageText(message);
  }
  return '';
}

/** Answers `Scripted answer: <last user message>`, so tests can tell which request got which answer. */
export const defaultResponder: Responder = ({ body }) => ({ content: `Scripted answer: ${lastUserMessageText(body)}` });

/** The offline demo model behind `npm run up`: friendly, deterministic, and honest about being scripted. */
export const demoResponder: Responder = ({ body }) => {
  // Planning requests (the runtime's planner prompt names the goal): one subtask, the goal itself.
  const system = body.messages?.find((m) => m.role === 'system');
  const planned = /^Goal to plan: (.*)$/m.exec(system ? messageText(system) : '')?.[1];
  if (planned !== undefined) return { content: JSON.stringify({ subtasks: [{ id: 'answer', intent: planned, depends_on: [] }] }) };
  // Long-term memory extraction (the memory service's judge answers `{"memories": [...]}`).
  if (system && /\{"memories": \[/.test(messageText(system))) return { content: JSON.stringify({ memories: demoMemories(lastUserMessageText(body)) }) };
  const said = (lastUserMessageText(body).split('\n')[0] ?? '').trim();
  const echo = said === '' ? '' : ` You said: "${said.length > 200 ? `${said.slice(0, 200)}…` : said}".`;
  return {
    content:
      `Hello! I am the Hermes scripted demo model, running offline, so my answers are canned rather than thought up.${echo} ` +
      'Point Hermes at a real OpenAI-compatible endpoint to get real answers.',
  };
};

const FIRST_PERSON = /\b(I|I'm|my)\b/i;
const PREFERENCE = /\b(prefer|like|love|always|never|hate)\b/i;
const FACT = /\b(use|work|live|name|am)\b/i;

/**
 * The demo's extraction judge: each first-person sentence of the user's new messages that states
 * a preference or a fact about them becomes a memory, so the offline demo shows long-term memory
 * at work (`hermes memory list <user>` after a task, the background block in the next one).
 */
function demoMemories(prompt: string): { type: 'preference' | 'fact'; content: string; confidence: number }[] {
  const newMessages = prompt.slice(Math.max(0, prompt.indexOf('New messages:')));
  return newMessages.split('\n').flatMap((line) => {
    const said = /^\[[^\]]*\] user: (.*)$/.exec(line)?.[1] ?? '';
    return said
      .split(/(?<=[.!?])\s+/)
      .map((sentence) => sentence.trim())
      .filter((sentence) => FIRST_PERSON.test(sentence) && (PREFERENCE.test(sentence) || FACT.test(sentence)))
      .map((sentence) => ({
        type: PREFERENCE.test(sentence) ? ('preference' as const) : ('fact' as const),
        content: `The user said: "${sentence.slice(0, 300)}"`,
        confidence: 0.8,
      }));
  });
}
