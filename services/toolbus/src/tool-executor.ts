import { SpanStatusCode } from '@opentelemetry/api';
import { contracts, type ToolError } from '@hermes/contracts';
import { RemoteError, request, type Bus } from '@hermes/bus';
import { contentAttribute, genAiContentCapture, hermesTracer } from '@hermes/telemetry';
import { activeToolCallId } from './tool-call-context.js';
import { ToolArgumentError, ToolRefusedError } from './toolbus-errors.js';
import { resultOverLimits } from './payload-limits.js';
import type { BuiltinTool, CallContext, ExecOutcome, RegisteredTool, ToolArguments } from './tool-types.js';

// Read once: the setting is process-wide (GenAI content capture, off by default).
const captureContent = genAiContentCapture();

/** Runs calls of MCP tools (the toolbus's McpHost). */
export interface McpCaller {
  call(
    route: { server: string; tool: string },
    args: ToolArguments,
    opts: { signal?: AbortSignal; timeoutMs: number; idempotencyKey?: string },
  ): Promise<ExecOutcome>;
}

export interface ExecuteOptions {
  callId: string;
  idempotencyKey: string;
  context: CallContext;
}

/**
 * Runs one validated call where its tool lives — in process for built-ins, on the provider's
 * queue group for remote tools — always under the tool's timeout, its result within the
 * tool-result limits. Every failure comes back as a ToolError; nothing is thrown.
 */
export class ToolExecutor {
  constructor(private readonly o: { bus: Bus; mcp?: McpCaller }) {}

  async execute(tool: RegisteredTool, args: ToolArguments, opts: ExecuteOptions): Promise<ExecOutcome & { duration_ms: number }> {
    const started = performance.now();
    const attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.spec.name,
      'gen_ai.tool.call.id': activeToolCallId() ?? opts.callId,
      'gen_ai.tool.type': tool.host.kind === 'builtin' ? 'function' : 'extension',
      'hermes.tool.call_id': opts.callId,
      'hermes.tool.provider': tool.provider,
    };
    return hermesTracer().startActiveSpan(`execute_tool ${tool.spec.name}`, { attributes }, async (span) => {
      if (captureContent && span.isRecording()) span.setAttribute('gen_ai.tool.call.arguments', contentAttribute(args));
      const { host } = tool;
      const ran =
        host.kind === 'builtin'
          ? await this.runBuiltin(tool, host.run, args, opts)
          : host.kind === 'mcp'
            ? await this.runMcp(tool, host, args, opts)
            : await this.runRemote(tool, host.provider, args, opts, host.subject);
      // Whatever hosts the tool, a result over the limits goes no further than this.
      const overLimits = ran.ok ? resultOverLimits(tool.spec.name, ran.result) : undefined;
      const outcome: ExecOutcome = overLimits ? { ok: false, error: overLimits } : ran;
      if (!outcome.ok) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
        span.setAttribute('error.type', outcome.error.code);
      } else if (captureContent && span.isRecording()) {
        span.setAttribute('gen_ai.tool.call.result', contentAttribute(outcome.result));
      }
      span.end();
      return { ...outcome, duration_ms: Math.round(performance.now() - started) };
    });
  }

  private async runBuiltin(tool: RegisteredTool, run: BuiltinTool['run'], args: ToolArguments, opts: ExecuteOptions): Promise<ExecOutcome> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<ExecOutcome>((resolve) => {
      timer = setTimeout(() => {
        abort.abort(new Error(`tool ${tool.spec.name} timed out`));
        resolve({ ok: false, error: timeoutError(tool) });
      }, tool.timeoutMs);
    });
    // Through a promise, so a handler that throws before its first await is caught the same way.
    const ran = Promise.resolve()
      .then(() => run(args, { ...opts.context, signal: abort.signal, idempotencyKey: opts.idempotencyKey }))
      .then(
        (result): ExecOutcome => ({ ok: true, result }),
        (err: unknown): ExecOutcome => ({ ok: false, error: builtinError(tool, err) }),
      );
    try {
      return await Promise.race([ran, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async runMcp(tool: RegisteredTool, route: { server: string; tool: string }, args: ToolArguments, opts: ExecuteOptions): Promise<ExecOutcome> {
    const mcp = this.o.mcp;
    if (!mcp) return { ok: false, error: { code: 'provider_unavailable', message: `MCP server "${route.server}" is not hosted here`, retryable: true } };
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<ExecOutcome>((resolve) => {
      timer = setTimeout(() => {
        abort.abort(new Error(`tool ${tool.spec.name} timed out`));
        resolve({ ok: false, error: timeoutError(tool) });
      }, tool.timeoutMs);
    });
    try {
      return await Promise.race([mcp.call(route, args, { signal: abort.signal, timeoutMs: tool.timeoutMs, idempotencyKey: opts.idempotencyKey }), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async runRemote(tool: RegisteredTool, provider: string, args: ToolArguments, opts: ExecuteOptions, subject?: string): Promise<ExecOutcome> {
    const deadline = Date.now() + tool.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.askProvider(tool, provider, args, opts, Math.max(1, deadline - Date.now()), subject);
      // Nobody was listening (the provider reconnecting to another NATS node, restarting): it never
      // got the call, so asking again under the same key is safe, until the tool's own deadline.
      const left = deadline - Date.now();
      if (outcome.ok || outcome.error.code !== 'provider_unavailable' || left <= 50) return outcome;
      await new Promise((r) => setTimeout(r, Math.min(left - 25, 100 * 2 ** Math.min(attempt - 1, 4))));
    }
  }

  private async askProvider(
    tool: RegisteredTool,
    provider: string,
    args: ToolArguments,
    opts: ExecuteOptions,
    timeoutMs: number,
    subject = this.o.bus.subjects.toolExec(provider),
  ): Promise<ExecOutcome> {
    try {
      const reply = await request(
        this.o.bus,
        contracts.toolExec,
        {
          idempotency_key: opts.idempotencyKey,
          tool: tool.spec.name,
          arguments: args,
          context: { task_id: opts.context.task_id, user_id: opts.context.user_id, roles: opts.context.roles },
        },
        { timeoutMs, subject },
      );
      return { ok: true, result: reply.result };
    } catch (err) {
      if (!(err instanceof RemoteError))
        return { ok: false, error: { code: 'tool_failed', message: `calling provider "${provider}" failed: ${(err as Error).message}`, retryable: true } };
      // Errors of the transport carry their cause; errors the provider answered with do not.
      const transport = err.cause !== undefined;
      if (transport && err.code === 'no_responders') {
        return {
          ok: false,
          error: {
            code: 'provider_unavailable',
            message: `tool provider "${provider}" is not available right now (no instance is listening)`,
            retryable: true,
          },
        };
      }
      if (transport && err.code === 'timeout') return { ok: false, error: timeoutError(tool) };
      // The provider's own timeout (its handler passed timeout_ms) means the same to the model as ours.
      if (err.wire.code === 'tool_timeout') return { ok: false, error: { code: 'tool_timeout', message: err.wire.message, retryable: true } };
      return { ok: false, error: { code: 'tool_failed', message: err.wire.message, retryable: err.wire.retryable } };
    }
  }
}

function timeoutError(tool: RegisteredTool): ToolError {
  return { code: 'tool_timeout', message: `tool "${tool.spec.name}" did not finish within ${tool.timeoutMs} ms`, retryable: true };
}

function builtinError(tool: RegisteredTool, err: unknown): ToolError {
  if (err instanceof ToolArgumentError) return { code: 'invalid_arguments', message: err.message, retryable: false, issues: err.issues };
  if (err instanceof ToolRefusedError) return { code: 'tool_failed', message: err.message, retryable: false };
  return { code: 'tool_failed', message: `tool "${tool.spec.name}" failed: ${(err as Error)?.message ?? String(err)}`, retryable: false };
}
