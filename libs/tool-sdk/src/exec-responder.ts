import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import { PAYLOAD_LIMITS, ToolExecRequest, contracts, decodeBoundedJson, extractTraceContext, validate, wireError, type WireError } from '@hermes/contracts';
import type { ToolSdkLogger } from './sdk-logger.js';
import type { CallMemory, RunOutcome } from './call-memory.js';
import type { HostedTool, ToolContext } from './define-tool.js';
import { ToolFailure, ToolSdkError } from './errors.js';

export interface ExecResponderOptions {
  nc: NatsConnection;
  logger: ToolSdkLogger;
  provider: string;
  tools: ReadonlyMap<string, HostedTool>;
  memory: CallMemory;
  /** Used for tools whose spec has no `timeout_ms`. */
  defaultTimeoutMs: number;
  /** Aborted when the provider gives up waiting for calls in flight at shutdown. */
  stopping: AbortSignal;
}

/** Longest error message sent back; a handler's message is for a model and a person, not a dump. */
const MAX_MESSAGE_CHARS = 2000;
const encoder = new TextEncoder();

/**
 * Answers toolExec requests with the `{ ok, result | error }` envelope, as `serve()` does for
 * other contracts: a request over the toolExec limits gets `payload_limit` (naming the limit and
 * path), one that fails its schema `invalid_payload` with the issues, and neither reaches a handler; a handler's error becomes a structured `tool_failed`, never a stack.
 */
export class ExecResponder {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly o: ExecResponderOptions) {}

  /** Takes one request message; the reply is sent when the call finishes, then `onAnswered` learns whether it was an error. Never throws. */
  handle(msg: Msg, onAnswered?: (failed: boolean) => void): void {
    const answered: Promise<void> = this.answer(msg, onAnswered).finally(() => this.inFlight.delete(answered));
    this.inFlight.add(answered);
  }

  /** Resolves once every call taken so far has been answered. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async answer(msg: Msg, answered?: (failed: boolean) => void): Promise<void> {
    const parent = extractTraceContext(msg.headers);
    // The tracer Hermes services use, so a provider's spans join the task's trace under the same name.
    const span = trace.getTracer('hermes').startSpan(
      'execute_tool',
      {
        kind: SpanKind.SERVER,
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'messaging.system': 'nats', 'messaging.destination.name': msg.subject },
      },
      parent,
    );
    await context.with(trace.setSpan(parent, span), async () => {
      let reply: Uint8Array;
      try {
        reply = await this.replyTo(msg, span);
      } catch (err) {
        // Only a bug in this module gets here; the caller still gets an answer.
        this.o.logger.error({ err, subject: msg.subject }, 'tool exec request failed');
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        reply = errorReply(wireError('internal', `tool provider ${this.o.provider} failed to handle the call`));
      }
      try {
        msg.respond(reply);
      } catch (err) {
        this.o.logger.warn({ err, subject: msg.subject }, 'could not send tool exec reply');
      }
      // The services API counts an error reply as an error ($SRV.STATS num_errors).
      answered?.(startsWith(reply, FAILED));
      span.end();
    });
  }

  private async replyTo(msg: Msg, span: Span): Promise<Uint8Array> {
    // Within the toolExec limits (arguments bounded as tool arguments) before a handler sees anything.
    const decoded = decodeBoundedJson(msg.data, contracts.toolExec.limits ?? PAYLOAD_LIMITS.envelope, { what: 'body' });
    if (!decoded.ok) {
      this.o.logger.warn({ subject: msg.subject, error: decoded.error }, 'undecodable tool exec request');
      return errorReply(decoded.error);
    }
    const checked = validate(ToolExecRequest, decoded.value);
    if (!checked.ok) {
      this.o.logger.warn({ subject: msg.subject, issues: checked.issues }, 'invalid tool exec request');
      return errorReply(wireError('invalid_payload', `request on ${msg.subject} does not match toolExec`, { issues: checked.issues }));
    }
    const req = checked.value;
    span.updateName(`execute_tool ${req.tool}`);
    span.setAttributes({ 'gen_ai.tool.name': req.tool, 'hermes.task_id': req.context.task_id });
    const tool = this.o.tools.get(req.tool);
    if (!tool) {
      return errorReply({ code: 'tool_not_found', message: `tool provider ${this.o.provider} has no tool "${req.tool}"`, retryable: false });
    }
    if (req.idempotency_key === '') return (await this.run(tool, req, span)).reply;
    // Keyed by tool too: a key reused for another tool is another call, not a replay.
    const { reply, replayed } = await this.o.memory.once(`${req.tool}\u0000${req.idempotency_key}`, () => this.run(tool, req, span));
    span.setAttribute('hermes.tool.replayed', replayed);
    return reply;
  }

  private async run(tool: HostedTool, req: ToolExecRequest, span: Span): Promise<RunOutcome> {
    const timeoutMs = tool.spec.timeout_ms ?? this.o.defaultTimeoutMs;
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort(new ToolSdkError('tool_timeout', `tool "${req.tool}" passed its timeout of ${timeoutMs} ms`));
    }, timeoutMs);
    const onStop = () => abort.abort(new ToolSdkError('provider_stopping', `tool provider ${this.o.provider} is stopping`));
    this.o.stopping.addEventListener('abort', onStop, { once: true });
    const ctx: ToolContext = {
      idempotencyKey: req.idempotency_key,
      taskId: req.context.task_id,
      userId: req.context.user_id,
      roles: req.context.roles,
      signal: abort.signal,
    };
    try {
      if (this.o.stopping.aborted) onStop();
      const result = await tool.handler(req.arguments, ctx);
      return this.success(req.tool, result);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      return this.failure(req.tool, err, timedOut);
    } finally {
      clearTimeout(timer);
      this.o.stopping.removeEventListener('abort', onStop);
    }
  }

  private success(tool: string, result: unknown): RunOutcome {
    let json: string | undefined;
    try {
      // undefined (a handler with nothing to say) and values JSON cannot hold become null.
      json = JSON.stringify(result ?? null) ?? 'null';
    } catch (err) {
      return this.failure(tool, new ToolFailure(`the result is not JSON: ${(err as Error).message}`), false);
    }
    // The envelope's result is a ToolExecReply, which holds the tool's result.
    const reply = encoder.encode(`{"ok":true,"result":{"result":${json}}}`);
    const limit = this.o.nc.info?.max_payload;
    if (limit !== undefined && reply.byteLength > limit) {
      // The handler ran; remembering the failure keeps a retry from running it a second time.
      return this.failure(tool, new ToolFailure(`the result (${reply.byteLength} bytes) exceeds the bus message limit of ${limit} bytes`), false);
    }
    return { reply, remember: true };
  }

  private failure(tool: string, err: unknown, timedOut: boolean): RunOutcome {
    const failure = err instanceof ToolFailure ? err : undefined;
    const raw = err instanceof Error ? err.message || err.name : String(err);
    const wire: WireError = {
      code: timedOut ? 'tool_timeout' : 'tool_failed',
      message: raw.length > MAX_MESSAGE_CHARS ? `${raw.slice(0, MAX_MESSAGE_CHARS)}…` : raw,
      retryable: failure?.retryable ?? false,
      ...(failure?.details ? { details: failure.details } : {}),
    };
    this.o.logger.warn({ err, tool, provider: this.o.provider }, 'tool handler failed');
    let reply: Uint8Array;
    try {
      reply = errorReply(wire);
    } catch {
      const { details: _unserialisable, ...rest } = wire;
      reply = errorReply(rest);
    }
    // A retryable failure is the handler saying "nothing happened, try again": do not replay it.
    return { reply, remember: !wire.retryable };
  }
}

const FAILED = encoder.encode('{"ok":false');
const startsWith = (bytes: Uint8Array, prefix: Uint8Array): boolean => bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);

/** The error envelope; throws when `error.details` cannot be JSON (the caller falls back to none). */
function errorReply(error: WireError): Uint8Array {
  return encoder.encode(JSON.stringify({ ok: false, error }));
}
