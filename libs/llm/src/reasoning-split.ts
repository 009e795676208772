const OPEN = '<think>';
const CLOSE = '</think>';

/** Text of one piece of content, split into what the model answered and what it reasoned. */
export interface SplitText {
  answer: string;
  reasoning: string;
}

/**
 * Splits inline `<think>…</think>` blocks (DeepSeek-R1 and Qwen3 distills served without a
 * reasoning parser, as vLLM and Ollama do by default; ollama/ollama#9137) out of streamed content.
 * A tag may arrive cut across deltas, so a tail that could still become one is held back until the
 * next delta (or the end) decides.
 */
export class ReasoningSplitter {
  private thinking = false;
  private held = '';
  private sawTag = false;

  push(text: string): SplitText {
    const out: SplitText = { answer: '', reasoning: '' };
    let buf = this.held + text;
    this.held = '';
    for (;;) {
      const tag = this.thinking ? CLOSE : OPEN;
      const at = buf.indexOf(tag);
      if (at < 0) break;
      this.emit(out, buf.slice(0, at));
      buf = buf.slice(at + tag.length);
      this.thinking = !this.thinking;
      this.sawTag = true;
    }
    const keep = partialTagLength(buf, this.thinking ? CLOSE : OPEN);
    this.held = buf.slice(buf.length - keep);
    this.emit(out, buf.slice(0, buf.length - keep));
    return out;
  }

  /** What is still held back; an unclosed `<think>` counts as reasoning to the end. */
  end(): SplitText {
    const out: SplitText = { answer: '', reasoning: '' };
    this.emit(out, this.held);
    this.held = '';
    return out;
  }

  /** Whether any think tag was seen (the answer then usually starts with the newlines after it). */
  get found(): boolean {
    return this.sawTag;
  }

  private emit(out: SplitText, text: string): void {
    if (this.thinking) out.reasoning += text;
    else out.answer += text;
  }
}

/** Length of the longest tail of `text` that is a start of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (text.endsWith(tag.slice(0, n))) return n;
  return 0;
}
