/** One tool call the model asked for, assembled from a stream's deltas. */
export interface AssembledToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A streamed tool-call delta as the OpenAI-compatible servers send it (every field may be missing). */
export interface ToolCallDelta {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

/**
 * Reassembles streamed tool calls. OpenAI sends each call's id once, in its first delta, and the
 * rest of its arguments under the same `index`; Ollama sends every call whole, each with `index: 0`
 * (or none) and only its `id` to tell them apart (ollama/ollama#15457, #7881). So a delta whose id
 * differs from the call at its index starts a new call, and a delta without an id continues the call
 * last started at its index.
 */
export class ToolCallAssembler {
  private readonly calls: AssembledToolCall[] = [];
  private readonly byIndex = new Map<number, AssembledToolCall>();

  add(d: ToolCallDelta): void {
    const index = d.index ?? 0;
    let call = this.byIndex.get(index);
    if (!call || (d.id && call.id && call.id !== d.id)) {
      call = { id: '', name: '', arguments: '' };
      this.calls.push(call);
      this.byIndex.set(index, call);
    }
    if (d.id) call.id = d.id;
    if (d.function?.name) call.name += d.function.name;
    if (d.function?.arguments) call.arguments += d.function.arguments;
  }

  /** The calls in the order they started; one a server sent without an id gets one (tool results must name their call). */
  result(): AssembledToolCall[] {
    return this.calls.map((c, i) => (c.id ? c : { ...c, id: `call_${i}` }));
  }
}
