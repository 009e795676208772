import type { Static, TObject } from '@sinclair/typebox';
import type { ToolSpec } from '@hermes/contracts';

/** What a handler knows about the call it runs. */
export interface ToolContext {
  /**
   * Stable for one logical call (`task:subtask:step:index`): a retry carries the same key. Pass it
   * on to downstream systems that de-duplicate (payment APIs, ticket systems, database upserts).
   */
  readonly idempotencyKey: string;
  readonly taskId: string;
  readonly userId: string;
  readonly roles: readonly string[];
  /** Aborted when the tool's `timeout_ms` has passed (the ToolBus has given up) or the provider stops. */
  readonly signal: AbortSignal;
}

/** Runs one call. Arguments were validated against the tool's `parameters` by the ToolBus. */
export type ToolHandler<Args = Record<string, unknown>, Result = unknown> = (args: Args, ctx: ToolContext) => Promise<Result>;

/** One tool as a provider hosts it: what it announces and what runs a call. */
export interface HostedTool {
  readonly spec: ToolSpec;
  readonly handler: ToolHandler;
}

/** The arguments a tool's handler receives: typed from a TypeBox schema, else a plain JSON object. */
export type ToolArgs<Parameters> = Parameters extends TObject ? Static<Parameters> : Record<string, unknown>;

/** A ToolSpec whose `parameters` may be a TypeBox schema (which is plain JSON Schema on the wire). */
export type ToolSpecInput<Parameters extends object> = Omit<ToolSpec, 'parameters'> & { parameters: Parameters };

/**
 * Pairs a spec with its handler. With `parameters` written in TypeBox the handler's arguments are
 * typed from it; with a plain JSON Schema, annotate the handler's first parameter instead.
 */
export function defineTool<Parameters extends object, Args = ToolArgs<Parameters>, Result = unknown>(
  spec: ToolSpecInput<Parameters>,
  handler: ToolHandler<Args, Result>,
): HostedTool {
  // The ToolBus validated the arguments against `parameters` before routing the call here.
  return { spec: spec as ToolSpec, handler: handler as unknown as ToolHandler };
}
