import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { toolSpecs as specsOf } from './tool-reserve.js';
import { ownerFields, wireError, type RuntimeJob, type ToolCallReply, type ToolDefinition, type WireError } from '@hermes/contracts';
import { LlmError, type ChatResult, type PermitReservation } from '@hermes/llm';
import type { ChatSeam, ToolSeam } from './model-seam.js';
import type { Checkpoint, CheckpointWriter } from './checkpoint-store.js';
import { callSignature, findLoop } from './loop-detector.js';
import { systemPrompt } from './prompt-builder.js';
import type { StepEvents } from './step-events.js';
import { noStepTimer, type StepTimer } from './step-timer.js';
import type { WaitOut } from './dependency-wait.js';
import type { Compactor } from './conversation-compaction.js';
import { answerMessage, ASK_USER, notAskedMessage, readQuestion, type Question } from './ask-user.js';
import { checkEvidence, describe, EVIDENCE_REQUEST_START, evidenceRequest, evidenceRequired } from './evidence-gate.js';

export interface LoopLimits {
  maxSteps: number;
  maxRepeats: number;
}

export type LoopOutcome =
  | { kind: 'answer'; output: string; usage: Checkpoint['usage']; model: string; checkpoint: Checkpoint }
  | { kind: 'stopped'; error: WireError; usage: Checkpoint['usage'] }
  /** The model asked its user (ask_user): the turn is checkpointed with the call pending, and the job ends until the answer. */
  | { kind: 'input_required'; question: Question; usage: Checkpoint['usage'] };

export interface AgentLoopDeps {
  /** The model: the LLM client, or a recorder or replayer in front of it (model-seam.ts). */
  llm: ChatSeam;
  tools: ToolSeam;
  checkpoints: CheckpointWriter;
  events: StepEvents;
  /** Times each step's phases (RUNTIME_STEP_TIMING); by default nothing is timed. */
  timer?: StepTimer;
  /** How the job's requests wait out a dependency's outage; by default they do not. */
  waitOut?: WaitOut;
  /** Folds the conversation when the model answers context_too_long; without it that error ends the job. */
  compact?: Compactor;
  /** AGENT_TOOL_ERROR_DETAIL: `none` hides why a tool call failed from the model (the eval suite's broken build); default `full`. */
  toolErrorDetail?: 'full' | 'none';
}

/**
 * The tool-calling loop for one job. Each LLM answer is checkpointed before the next LLM call and
 * before any of its tool calls with side effects runs (side-effect-free ones go out alongside the
 * write), so a redelivered job continues from the last finished step without repeating an LLM call.
 * Tool calls carry a key of task, subtask, step and index, and the toolbus records every reply
 * under it: the records are the durable half of a step's state. A resumed job re-sends the
 * checkpointed turn's calls and the toolbus replays their recorded replies, which is why tool
 * results need no checkpoint write of their own before the next LLM call.
 */
export class AgentLoop {
  constructor(private readonly d: AgentLoopDeps) {}

  async run(o: {
    job: RuntimeJob;
    checkpoint: Checkpoint;
    tools: ToolDefinition[];
    limits: LoopLimits;
    /** Content deltas of each LLM call as they stream in, with the step they belong to. */
    onDelta?: (text: string, step: number) => void;
    /** The semaphore priority of the loop's LLM calls (callPriority); absent = normal. */
    priority?: number;
    signal?: AbortSignal;
  }): Promise<LoopOutcome> {
    const { job, checkpoint: cp, limits } = o;
    const timer = this.d.timer ?? noStepTimer;
    const system: ChatCompletionMessageParam = { role: 'system', content: systemPrompt(job, o.tools.length > 0) };
    const toolSpecs: ChatCompletionTool[] = specsOf(o.tools);
    let model = this.d.llm.modelFor(job.model_role);
    const sideEffectFree = new Set(o.tools.filter((t) => t.idempotent).map((t) => t.name));
    // Calls of the current turn already sent, by index (see below).
    let sent: Map<number, Promise<ToolCallReply>> | undefined;
    // A checkpoint that ends in a turn with calls: this job was redelivered, and they have likely run.
    let resumed = cp.pending;
    // The next LLM call's permit, taken while this turn's tool calls run.
    let reservation: PermitReservation | undefined;

    // A job redelivered after its final answer was checkpointed (e.g. the session write failed) reports that answer.
    const last = cp.messages.at(-1);
    if (cp.step > 0 && !cp.pending && last?.role === 'assistant' && !last.tool_calls?.length) {
      return { kind: 'answer', output: typeof last.content === 'string' ? last.content : '', usage: cp.usage, model, checkpoint: cp };
    }

    try {
      for (;;) {
        // Limits come before pending tool calls: a model that will not be asked again would never read their results.
        if (cp.step >= limits.maxSteps) return this.stop(cp, maxStepsError(cp, limits.maxSteps));
        const budget = job.budget?.max_tokens;
        const used = cp.usage.input_tokens + cp.usage.output_tokens;
        if (budget !== undefined && used >= budget) {
          return this.stop(
            cp,
            wireError('budget_exceeded', `the task used ${used} of its ${budget} tokens`, { used_tokens: used, max_tokens: budget, steps: cp.step }),
          );
        }
        if (cp.pending) {
          const asked = await this.runPendingTools(job, cp, timer, { resumed, ...(o.signal ? { signal: o.signal } : {}), ...(sent ? { sent } : {}) });
          if (asked) return { kind: 'input_required', question: asked, usage: cp.usage };
        }
        sent = undefined;
        resumed = false;

        const step = cp.step + 1;
        const onDelta = o.onDelta;
        timer.startStep(step);
        const ask = () =>
          timer.time('llm', () =>
            this.d.llm.chat({
              role: job.model_role,
              step,
              ...(o.priority !== undefined ? { priority: o.priority } : {}),
              messages: [system, ...cp.messages],
              ...(toolSpecs.length ? { tools: toolSpecs } : {}),
              ...(o.signal ? { signal: o.signal } : {}),
              ...(onDelta ? { onDelta: (text: string) => onDelta(text, step) } : {}),
              ...(reservation ? { reservation } : {}),
            }),
          );
        let answer: ChatResult;
        try {
          // A runtime paused past its ack wait must not ask a step its job's next holder asks too.
          await this.d.checkpoints.stillHeld();
          answer = await ask();
        } catch (err) {
          if (!isContextTooLong(err) || !this.d.compact) throw err;
          // The reservation went with the refused call.
          reservation = undefined;
          const compacted = await this.d.compact(job, cp.messages);
          if (!compacted) return this.stop(cp, contextTooLong(err, { compacted: false, step }));
          cp.messages = compacted.messages;
          this.d.events.compacted(job, step, compacted);
          try {
            answer = await ask();
          } catch (again) {
            if (isContextTooLong(again)) return this.stop(cp, contextTooLong(again, { compacted: true, step, folded_messages: compacted.folded }));
            throw again;
          }
        }
        reservation = undefined;
        model = answer.model;
        cp.step = step;
        cp.usage = { input_tokens: cp.usage.input_tokens + answer.usage.input_tokens, output_tokens: cp.usage.output_tokens + answer.usage.output_tokens };
        this.d.events.llmCall(job, step, answer);

        if (answer.toolCalls.length === 0) {
          cp.messages.push({ role: 'assistant', content: answer.content ?? '' });
          const refused = this.gate(job, o.tools, cp, answer.content ?? '');
          if (refused === 'ask_again') {
            // Saved like a tool turn: a redelivered job asks the model again instead of reporting the refused answer.
            await timer.time('checkpoint', () => this.d.checkpoints.save(cp));
            timer.end();
            continue;
          }
          if (refused) return this.stop(cp, refused);
          // Saved before the session write: a runtime that lost the job learns it here, before any side effect.
          await timer.time('checkpoint', () => this.d.checkpoints.save(cp));
          timer.end();
          return { kind: 'answer', output: answer.content ?? '', usage: cp.usage, model, checkpoint: cp };
        }
        const signatures = answer.toolCalls.map((c) => callSignature(c.name, c.arguments));
        const looping = findLoop(cp.calls, signatures, limits.maxRepeats);
        if (looping) return this.stop(cp, loopError(looping, limits.maxRepeats, step));

        cp.messages.push({
          role: 'assistant',
          content: answer.content,
          tool_calls: answer.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
        });
        cp.calls.push(...signatures);
        cp.pending = true;
        // Side-effect-free calls go out with the checkpoint write instead of after it. Should the write
        // never land, the turn is asked again and its calls may differ: the toolbus then lets the new
        // call under a key take the old one's record over, which is safe only for such calls.
        sent = this.sendCalls(job, cp, (name) => sideEffectFree.has(name), o.signal);
        reservation = this.d.llm.reserve(job.model_role);
        await timer.time('checkpoint', () => this.d.checkpoints.save(cp));
      }
    } finally {
      // Stopped before the next LLM call (limits, a failed tool call, cancellation): let the permit go.
      void reservation?.cancel();
    }
  }

  /**
   * The evidence gate (docs/planning.md): an answer that must cite tool results and does not, or
   * quotes what they do not hold, gets one more chance with what was wrong; the second such answer
   * ends the job `unsupported_answer`. Whether the chance was used is read from the conversation
   * itself, so a redelivered job counts it too.
   */
  private gate(job: RuntimeJob, tools: ToolDefinition[], cp: Checkpoint, answer: string): WireError | 'ask_again' | undefined {
    if (!evidenceRequired(job, tools, cp.messages)) return undefined;
    const problems = checkEvidence(answer, cp.messages);
    if (problems.length === 0) return undefined;
    const asked = cp.messages.some((m) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith(EVIDENCE_REQUEST_START));
    if (!asked) {
      cp.messages.push({ role: 'user', content: evidenceRequest(problems) });
      this.d.events.evidenceRefused(job, cp.step, problems);
      return 'ask_again';
    }
    return wireError('unsupported_answer', `the answer is not supported by tool results: ${problems.map(describe).join('; ')}`, {
      problems,
      answer: answer.slice(0, 4000),
      step: cp.step,
    });
  }

  /** Sends the last turn's calls that `which` picks, by index; a failure is the caller's to see when it awaits. */
  private sendCalls(job: RuntimeJob, cp: Checkpoint, which: (tool: string) => boolean, signal?: AbortSignal): Map<number, Promise<ToolCallReply>> {
    const out = new Map<number, Promise<ToolCallReply>>();
    pendingCalls(cp).forEach((c, index) => {
      if (c.type !== 'function' || !which(c.function.name)) return;
      const reply = this.callTool(job, cp.step, index, c, { resumed: false, ...(signal ? { signal } : {}) });
      // Awaited later or never (the loop may stop first); either way not an unhandled rejection.
      reply.catch(() => undefined);
      out.set(index, reply);
    });
    return out;
  }

  private async callTool(job: RuntimeJob, step: number, index: number, call: FunctionCall, o: CallOptions): Promise<ToolCallReply> {
    const { name: tool, arguments: args } = call.function;
    this.d.events.toolCall(job, step, index, tool, args);
    const reply = await this.d.tools.call(
      {
        idempotency_key: `${job.task_id}:${job.subtask_id}:${step}:${index}`,
        task_id: job.task_id,
        subtask_id: job.subtask_id,
        step,
        call_index: index,
        tool_call_id: call.id,
        ...ownerFields(job),
        roles: jobRoles(job),
        ...(job.tools ? { allow: job.tools } : {}),
        tool,
        arguments: args,
        ...(o.resumed ? { resumed: true } : {}),
      },
      o.signal,
      this.d.waitOut,
    );
    this.d.events.toolResult(job, step, index, tool, reply);
    return reply;
  }

  /**
   * Runs the tool calls of the last assistant turn in parallel; results go back in call order,
   * into the checkpoint's messages (stored with the next turn: until then the toolbus's call
   * records hold them). A runtime that lost the job to another may so make one more LLM call
   * before its next checkpoint write fails; it never runs a tool for it.
   */
  private async runPendingTools(
    job: RuntimeJob,
    cp: Checkpoint,
    timer: StepTimer,
    o: CallOptions & { sent?: Map<number, Promise<ToolCallReply>> },
  ): Promise<Question | undefined> {
    const calls = pendingCalls(cp);
    // ask_user never goes to the toolbus: its result is the user's answer, which a resumed job carries.
    const asks = askUserReplies(job, calls);
    const replies = await timer.time('tools', () =>
      Promise.all(
        calls.map((c, index) => {
          if (c.type !== 'function' || asks.has(index)) return undefined;
          return o.sent?.get(index) ?? this.callTool(job, cp.step, index, c, o);
        }),
      ),
    );
    // The turn stays pending: the resuming job sends its other calls again, and the toolbus replays their records.
    const question = [...asks.values()].find((a): a is Question => typeof a !== 'string');
    if (question) return question;
    calls.forEach((c, i) =>
      cp.messages.push({ role: 'tool', tool_call_id: c.id, content: (asks.get(i) as string | undefined) ?? toolMessage(replies[i], this.d.toolErrorDetail) }),
    );
    cp.pending = false;
    return undefined;
  }

  private stop(cp: Checkpoint, error: WireError): LoopOutcome {
    return { kind: 'stopped', error, usage: cp.usage };
  }
}

type FunctionCall = Extract<ReturnType<typeof pendingCalls>[number], { type: 'function' }>;

interface CallOptions {
  /** Sent again after the job was redelivered (the toolbus then looks for the call's record first). */
  resumed: boolean;
  signal?: AbortSignal;
}

/**
 * The ask_user calls of a turn, by index: the answered one's tool message, the question still to
 * ask (the first one only: one question at a time), or the correction for a call not asked.
 */
function askUserReplies(job: RuntimeJob, calls: ReturnType<typeof pendingCalls>): Map<number, string | Question> {
  const out = new Map<number, string | Question>();
  // A turn whose question was answered asks no other: the answer would be lost to the next resume.
  let asked = calls.some((c) => c.id === job.input_answer?.call_id);
  calls.forEach((c, index) => {
    if (c.type !== 'function' || c.function.name !== ASK_USER) return;
    if (job.input_answer?.call_id === c.id) return out.set(index, answerMessage(job.input_answer));
    const q = readQuestion(c.id, c.function.arguments);
    if ('error' in q) return out.set(index, notAskedMessage(q.error));
    if (asked) return out.set(index, notAskedMessage('ask one question at a time; ask this one again if you still need it'));
    asked = true;
    out.set(index, q);
  });
  return out;
}

/** The tool calls of the checkpoint's last assistant turn. */
function pendingCalls(cp: Checkpoint) {
  const assistant = cp.messages.at(-1);
  return assistant && assistant.role === 'assistant' ? (assistant.tool_calls ?? []) : [];
}

/** What the model reads back for a tool call: the result, or what failed and why. */
export function toolMessage(reply: ToolCallReply | undefined, detail: 'full' | 'none' = 'full'): string {
  if (!reply) return JSON.stringify({ ok: false, error: 'unsupported tool call type' });
  // Adjustments tell the model what the ToolBus changed in its arguments, so its next call can send that itself.
  const adjusted = reply.adjustments?.length ? { adjusted_arguments: reply.adjustments } : {};
  if (reply.status === 'ok') return JSON.stringify({ ok: true, result: reply.result, ...(reply.truncated ? { truncated: true } : {}), ...adjusted });
  // A deliberately degraded build: the model learns only that the call failed, so it cannot correct itself.
  if (detail === 'none') return JSON.stringify({ ok: false });
  return JSON.stringify({
    ok: false,
    error: reply.error ?? { code: 'tool_failed', message: 'the tool call did not complete' },
    ...adjusted,
    hint: 'The tool call failed. Fix the arguments or try another way; do not invent a result.',
  });
}

function isContextTooLong(err: unknown): err is LlmError {
  return err instanceof LlmError && err.code === 'context_too_long';
}

/** What ends a job whose conversation does not fit even after compaction (or had nothing to fold). */
function contextTooLong(err: LlmError, more: Record<string, unknown>): WireError {
  const how = more.compacted ? 'even after the conversation was compacted' : 'and the conversation has nothing left to fold';
  return { ...err.toWire(), message: `${err.message} (${how})`, details: { ...err.details, ...more } };
}

function maxStepsError(cp: Checkpoint, maxSteps: number): WireError {
  const lastAnswer = [...cp.messages].reverse().find((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content);
  return wireError('max_steps_exceeded', `stopped after ${maxSteps} steps without a final answer`, {
    steps: cp.step,
    tool_calls: cp.calls.length,
    tools_used: [...new Set(cp.calls.map((s) => s.split(' ')[0]))],
    last_assistant_message: lastAnswer?.content ?? null,
  });
}

function loopError(signature: string, maxRepeats: number, step: number): WireError {
  const [tool, ...args] = signature.split(' ');
  return wireError('loop_detected', `the model asked for ${tool} with the same arguments ${maxRepeats + 1} times; stopped at step ${step}`, {
    tool,
    arguments: args.join(' '),
    step,
    hint: 'The agent kept repeating one call. Check that the tool returns what the goal needs, or rephrase the goal.',
  });
}

/** A job's roles; a job from a dispatcher that set none (older ones) runs as a plain user. */
export function jobRoles(job: Pick<RuntimeJob, 'roles'>): string[] {
  return job.roles ?? ['user'];
}
