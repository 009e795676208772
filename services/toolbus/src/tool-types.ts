import type { Static } from '@sinclair/typebox';
import type { ArgumentIssue as ArgumentIssueSchema, MemoryProvenance, ToolError, ToolSpec } from '@hermes/contracts';
import type { ValidateFunction } from 'ajv';

export type ArgumentIssue = Static<typeof ArgumentIssueSchema>;
export type ToolArguments = Record<string, unknown>;

/** Who is calling: what a tool may learn about the caller, and what permissions are checked against. */
export interface CallContext {
  task_id: string;
  user_id: string;
  /** The owner's team (absent: the default team); built-in tools scope by it. Not sent to providers: their exec contract has no team yet. */
  team?: string;
  roles: string[];
  /** For a tool that writes memory: where what it writes came from, decided when the call arrived (see result-trust.ts). Never sent to providers. */
  provenance?: MemoryProvenance;
}

/** What a built-in tool gets besides its (validated) arguments. */
export interface ToolRunContext extends CallContext {
  /** Aborted when the tool's timeout passes: stop work and release sockets. */
  signal: AbortSignal;
  idempotencyKey: string;
}

/** A tool implemented inside the toolbus. */
export interface BuiltinTool {
  spec: ToolSpec;
  run(args: ToolArguments, ctx: ToolRunContext): Promise<unknown>;
}

/** Where a registered tool runs; a remote tool found as a micro service endpoint has that endpoint's subject (else its provider's exec subject). */
export type ToolHost =
  { kind: 'builtin'; run: BuiltinTool['run'] } | { kind: 'remote'; provider: string; subject?: string } | { kind: 'mcp'; server: string; tool: string };

/** A tool the registry offers: its spec (arguments schema closed), where it runs and its compiled validator. */
export interface RegisteredTool {
  spec: ToolSpec;
  /** `builtin` or the remote provider's name. */
  provider: string;
  host: ToolHost;
  validate: ValidateFunction;
  timeoutMs: number;
}

/** How one execution ended, before it is shaped into a reply. */
export type ExecOutcome = { ok: true; result: unknown } | { ok: false; error: ToolError };
