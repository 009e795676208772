/** A tool whose definition changed after it was first seen. */
export interface ToolChange {
  tool: string;
  detected_at: string;
  /** True while the tool is hidden, waiting for `hermes mcp approve-change`. */
  held: boolean;
}

export interface ChangeWatchOptions<T> {
  /** Whether `now` is a change worth reporting against what was accepted. */
  differs(accepted: T, now: T): boolean;
}

/**
 * What the toolbus accepted of each tool of one source (an MCP server's description and schema, a
 * remote provider's policy), and which later versions wait for approval. The one hold/approve path
 * behind `hermes mcp approve-change`, for MCP servers (rug pulls) and remote providers (relaxed
 * policy). Kept in this replica's memory: it survives a source's restarts, not the toolbus's.
 */
export class ChangeWatch<T> {
  private readonly accepted = new Map<string, T>();
  private readonly latest = new Map<string, T>();
  private readonly changes = new Map<string, ToolChange>();

  constructor(private readonly o: ChangeWatchOptions<T>) {}

  /**
   * Looks at a tool's current version; with `holds`, a change hides the tool until approved (else it
   * is accepted and only noted). `detected` is true the first time a change is seen (log it then).
   */
  see(tool: string, value: T, holds: boolean): { held: boolean; detected: boolean } {
    this.latest.set(tool, value);
    const known = this.accepted.get(tool);
    if (known === undefined || !this.o.differs(known, value)) {
      this.accepted.set(tool, value);
      // Changed back to what was accepted: nothing to hold any more.
      if (this.changes.get(tool)?.held) this.changes.delete(tool);
      return { held: false, detected: false };
    }
    if (this.changes.get(tool)?.held) return { held: true, detected: false };
    this.changes.set(tool, { tool, detected_at: new Date().toISOString(), held: holds });
    if (!holds) this.accepted.set(tool, value);
    return { held: holds, detected: true };
  }

  /**
   * Whether this version differs from the accepted one (and was not approved), without recording
   * anything: for sources with several live versions at once (instances of one provider).
   */
  blocks(tool: string, value: T): boolean {
    const known = this.accepted.get(tool);
    return known !== undefined && this.o.differs(known, value);
  }

  isHeld(tool: string): boolean {
    return this.changes.get(tool)?.held === true;
  }

  /** Accepts the latest version of changed tools (all when `tool` is absent); returns the tools accepted. */
  approve(tool?: string): string[] {
    const accepted: string[] = [];
    for (const [name, change] of this.changes) {
      if (tool !== undefined && name !== tool) continue;
      const latest = this.latest.get(name);
      if (latest !== undefined) this.accepted.set(name, latest);
      this.changes.delete(name);
      accepted.push(change.tool);
    }
    return accepted;
  }

  list(): ToolChange[] {
    return [...this.changes.values()];
  }
}
