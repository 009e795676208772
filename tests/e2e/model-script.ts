import type { ChatMessage, ChatRequestBody, RecordedRequest, ScriptedLlm, ScriptedResponse } from '@hermes/testkit';

/** One answer of the scripted model: fixed, or computed from the request and its number (0-based) for the goal. */
export type Turn = ScriptedResponse | ((request: RecordedRequest, n: number) => ScriptedResponse);

interface GoalScript {
  turns: Turn[];
  then: Turn;
  asked: number;
}

/** The goal a runtime request works on, read from the system prompt that anchors every call of the loop. */
export function goalOf(body: ChatRequestBody): string | undefined {
  const system = body.messages?.find((m) => m.role === 'system');
  const text = typeof system?.content === 'string' ? system.content : '';
  return /^Your goal, which you keep to until it is done: (.*)$/m.exec(text)?.[1];
}

/** The tool names offered to the model in a request. */
export function offeredTools(body: ChatRequestBody): string[] {
  return (body.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);
}

/** The tool messages of a request, in order, with their content parsed (the runtime sends JSON). */
export function toolMessages(body: ChatRequestBody): { tool_call_id: string; content: ToolMessage }[] {
  return (body.messages ?? [])
    .filter((m): m is ChatMessage & { tool_call_id: string } => m.role === 'tool' && typeof m.tool_call_id === 'string')
    .map((m) => ({ tool_call_id: m.tool_call_id, content: JSON.parse(typeof m.content === 'string' ? m.content : 'null') as ToolMessage }));
}

/** What the runtime tells the model about one tool call. */
export interface ToolMessage {
  ok: boolean;
  result?: Record<string, unknown>;
  error?: { code: string; message: string; retryable: boolean; issues?: { path: string; message: string; expected?: string; got?: string; rule?: string }[] };
  /** What the ToolBus's transforms changed in the arguments before the tool ran. */
  adjusted_arguments?: { path: string; transform: string; from: string; to: string }[];
  hint?: string;
}

/**
 * Routes the scripted model's requests by the task's goal, so each test scripts its own
 * conversation however requests of several tasks interleave: the n-th request for a goal gets
 * its n-th turn, and `then` once the turns run out (default: a final answer `Done: <goal>`).
 */
export class ModelScript {
  private readonly goals = new Map<string, GoalScript>();

  /** `unscripted` answers requests of no scripted goal (the memory service's summariser, say). */
  constructor(
    private readonly llm: ScriptedLlm,
    private readonly opts: { unscripted?: (request: RecordedRequest) => ScriptedResponse } = {},
  ) {
    llm.setResponder((request) => this.answer(request));
  }

  /** Scripts the conversation of the task with this goal (one line, unique among the tests). */
  on(goal: string, turns: Turn[], opts: { then?: Turn } = {}): void {
    this.goals.set(goal, { turns, then: opts.then ?? { content: `Done: ${goal}` }, asked: 0 });
  }

  /** Every request the model received for this goal, oldest first. */
  requests(goal: string): RecordedRequest[] {
    return this.llm.requests.filter((r) => goalOf(r.body) === goal);
  }

  private answer(request: RecordedRequest): ScriptedResponse {
    const goal = goalOf(request.body);
    const script = goal === undefined ? undefined : this.goals.get(goal);
    if (!script) return this.opts.unscripted?.(request) ?? { content: `Unscripted answer: ${goal ?? '(no goal)'}` };
    const n = script.asked++;
    const turn = script.turns[n] ?? script.then;
    return typeof turn === 'function' ? turn(request, n) : turn;
  }
}

/** A model turn asking for these tool calls (ids given, so tests can follow them into tool messages). */
export function callTools(...calls: { id?: string; name: string; arguments: string | object }[]): ScriptedResponse {
  return { toolCalls: calls };
}
