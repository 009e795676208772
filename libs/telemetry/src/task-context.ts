import { context, createContextKey, propagation, type Context } from '@opentelemetry/api';

/** Baggage keys that name the task and user a piece of work belongs to (W3C baggage in NATS headers). */
export const TASK_BAGGAGE_KEY = 'hermes.task_id';
export const USER_BAGGAGE_KEY = 'hermes.user_id';

export interface TaskFields {
  task_id: string;
  user_id?: string;
}

/**
 * A context that names the task (and user) being handled. It travels as W3C baggage with every
 * NATS message sent inside it, so every service's log lines for the task carry `task_id` and
 * `user_id` without each handler binding them (see createLogger).
 */
export function withTaskFields(ctx: Context, fields: TaskFields): Context {
  let bag = propagation.getBaggage(ctx) ?? propagation.createBaggage();
  bag = bag.setEntry(TASK_BAGGAGE_KEY, { value: fields.task_id });
  if (fields.user_id !== undefined) bag = bag.setEntry(USER_BAGGAGE_KEY, { value: fields.user_id });
  return propagation.setBaggage(ctx, bag);
}

/** Runs `fn` with the task named in the active context (see withTaskFields). */
export function runForTask<T>(fields: TaskFields, fn: () => T): T {
  return context.with(withTaskFields(context.active(), fields), fn);
}

/** The task and user the active context names, if any. */
export function activeTaskFields(ctx: Context = context.active()): Partial<TaskFields> {
  const bag = propagation.getBaggage(ctx);
  if (!bag) return {};
  const task = bag.getEntry(TASK_BAGGAGE_KEY)?.value;
  const user = bag.getEntry(USER_BAGGAGE_KEY)?.value;
  return { ...(task ? { task_id: task } : {}), ...(user ? { user_id: user } : {}) };
}

const CONVERSATION_KEY = createContextKey('hermes.gen_ai.conversation_id');

/** A context naming the GenAI conversation (Hermes: the session) for the `chat` spans made inside it. */
export function withConversation(ctx: Context, conversationId: string): Context {
  return ctx.setValue(CONVERSATION_KEY, conversationId);
}

/** The conversation the active context names (gen_ai.conversation.id), if any. */
export function activeConversationId(ctx: Context = context.active()): string | undefined {
  const v = ctx.getValue(CONVERSATION_KEY);
  return typeof v === 'string' ? v : undefined;
}
