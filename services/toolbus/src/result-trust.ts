import type { MemoryProvenance, ToolCallRequest } from '@hermes/contracts';
import type { CallRecord, CallRecordStore } from './call-record.js';
import { BUILTIN_PROVIDER } from './tool-registry.js';
import type { RegisteredTool } from './tool-types.js';

/**
 * Built-ins whose results carry nothing from outside: they compute (time, echo of the model's own
 * text) or read back memory (whose own writes went through this check). `http_get` is not among
 * them: a page can say anything.
 */
const TRUSTED_BUILTINS: ReadonlySet<string> = new Set(['time_now', 'date_add', 'date_diff', 'echo', 'remember', 'recall']);

/** Built-ins that write long-term memory: their calls get a provenance. */
const MEMORY_WRITERS: ReadonlySet<string> = new Set(['remember']);

export interface ResultTrustOptions {
  store: CallRecordStore;
  /** TOOL_TRUSTED_RESULTS: tools (beyond the built-ins above) whose results are trusted. */
  trusted: readonly string[];
  /** TOOL_CONFIRM_UNTRUSTED_MEMORY: a memory write after an untrusted result waits for a person. */
  confirmUntrusted: boolean;
}

/**
 * Where a memory written by a tool call comes from. A tool result is text from outside (a web
 * page, another team's provider, an MCP server) that the model reads, so it can tell the model to
 * remember something, and a planted memory outlives the task. The toolbus, not the runtime, decides
 * what came back earlier in the task: it reads the task's own call records (which hold each tool
 * and its reply), so a runtime cannot hide a result. Trust is the toolbus's configuration, never a
 * provider's claim about its own tool.
 */
export class ResultTrust {
  private readonly trusted: ReadonlySet<string>;

  constructor(private readonly o: ResultTrustOptions) {
    this.trusted = new Set(o.trusted);
  }

  /** Whether this tool's calls write long-term memory (and so get a provenance). */
  writesMemory(tool: RegisteredTool): boolean {
    return tool.provider === BUILTIN_PROVIDER && MEMORY_WRITERS.has(tool.spec.name);
  }

  /** Whether results of this tool are trusted. */
  isTrusted(tool: { name: string; provider: string | undefined }): boolean {
    return (tool.provider === BUILTIN_PROVIDER && TRUSTED_BUILTINS.has(tool.name)) || this.trusted.has(tool.name);
  }

  /**
   * The provenance of a memory-writing call: `tool_result` with the untrusted tools whose results
   * came back before it in the task (in the same subtask, at an earlier step; in another subtask,
   * at any: its output may reach this one as a dependency), `model` when there were none.
   */
  async provenanceOf(req: ToolCallRequest, callId: string): Promise<MemoryProvenance> {
    const records = await this.o.store.ofTask(req.task_id);
    const tools = [
      ...new Set(
        records
          .filter((r) => r.call_id !== callId && cameBefore(r, req) && returnedOutput(r) && !this.isTrusted({ name: r.origin.tool, provider: r.provider }))
          .map((r) => r.origin.tool),
      ),
    ].sort();
    const base = { task_id: req.task_id, call_id: callId };
    return tools.length > 0 ? { kind: 'tool_result', tools, ...base } : { kind: 'model', ...base };
  }

  /** Whether a call with this provenance waits for a person's approval before it writes. */
  needsApproval(provenance: MemoryProvenance | undefined): boolean {
    return this.o.confirmUntrusted && provenance?.kind === 'tool_result';
  }
}

function cameBefore(r: CallRecord, req: ToolCallRequest): boolean {
  return r.origin.subtask_id !== req.subtask_id || r.origin.step < req.step;
}

/** A call whose tool ran and answered: its result, or an error text the tool itself wrote. */
function returnedOutput(r: CallRecord): boolean {
  if (r.state !== 'done' || !r.reply) return false;
  return r.reply.status === 'ok' || r.reply.error?.code === 'tool_failed';
}
