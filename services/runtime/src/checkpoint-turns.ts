import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { decodeStored, StoredCheckpointTurn, StoredStateError, type StoredCheckpointHead } from '@hermes/contracts';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** Contents above this many UTF-8 bytes are stored once by hash, not inside their turn record. */
export const INLINE_CONTENT_BYTES = 32 * 1024;

/** What one save adds to the conversation, before it is encoded. */
export interface TurnDelta {
  turn: number;
  fresh: boolean;
  messages: ChatCompletionMessageParam[];
  calls: string[];
}

/** The key of the head record, which holds the fence. */
export const headKey = (jobId: string) => `job.${safe(jobId)}`;
/** The key of turn `n` as the delivery with `token` wrote it. */
export const turnKey = (jobId: string, token: string, turn: number) => `job.${safe(jobId)}.${token}.${turn}`;
/** The key of a stored content, by the SHA-256 of its text (within the job, so the bucket's TTL ends it with the job's other records). */
export const blobKey = (jobId: string, sha256: string) => `job.${safe(jobId)}.blob.${sha256}`;

const safe = (jobId: string) => jobId.replace(/[^A-Za-z0-9_=-]/g, '_');

/**
 * Turn records of one job in the checkpoint bucket. A turn is written with a plain put: its key
 * carries the writing delivery's token, so only that delivery ever writes it, and it counts only
 * once the head that names it has landed under the fence.
 */
export class TurnRecords {
  /** Contents this job has stored already (a repeated result is not written twice). */
  private readonly stored = new Set<string>();

  private readonly kv: KV;
  private readonly jobId: string;
  private readonly inlineBytes: number;

  constructor(private readonly o: { kv: KV; bucket: string; jobId: string; inlineBytes?: number }) {
    this.kv = o.kv;
    this.jobId = o.jobId;
    this.inlineBytes = o.inlineBytes ?? INLINE_CONTENT_BYTES;
  }

  /** Writes the turn and the contents it spills to blobs, all at once; resolves when all are stored. */
  async write(token: string, delta: TurnDelta): Promise<void> {
    const refs: NonNullable<StoredCheckpointTurn['refs']> = [];
    const writes: Promise<unknown>[] = [];
    const messages = delta.messages.map((m, index) => {
      const content = (m as { content?: unknown }).content;
      if (typeof content !== 'string' || content.length * 3 <= this.inlineBytes) return m;
      const bytes = Buffer.byteLength(content);
      if (bytes <= this.inlineBytes) return m;
      const sha256 = createHash('sha256').update(content).digest('hex');
      refs.push({ message: index, sha256, bytes });
      if (!this.stored.has(sha256)) writes.push(this.kv.put(blobKey(this.jobId, sha256), content).then(() => this.stored.add(sha256)));
      return { ...m, content: '' } as ChatCompletionMessageParam;
    });
    const record: StoredCheckpointTurn = {
      v: 1,
      job_id: this.jobId,
      turn: delta.turn,
      ...(delta.fresh ? { fresh: true } : {}),
      messages: messages as StoredCheckpointTurn['messages'],
      calls: delta.calls,
      ...(refs.length ? { refs } : {}),
    };
    writes.push(this.kv.put(turnKey(this.jobId, token, delta.turn), JSON.stringify(record)));
    await Promise.all(writes);
  }

  /**
   * The conversation the head names: its turns from `base` on, read at once, with their blobs.
   * A turn or blob the head names but the bucket lacks is corrupt state, not a fresh start.
   */
  async read(head: StoredCheckpointHead): Promise<{ messages: ChatCompletionMessageParam[]; calls: string[] }> {
    const numbers = Array.from({ length: Math.max(0, head.turns - head.base + 1) }, (_, i) => head.base + i);
    const turns = await Promise.all(numbers.map((n) => this.readTurn(n, this.writerOf(head, n))));
    const messages: ChatCompletionMessageParam[] = [];
    const calls: string[] = [];
    for (const t of turns) {
      messages.push(...(t.messages as ChatCompletionMessageParam[]));
      calls.push(...t.calls);
    }
    return { messages, calls };
  }

  private async readTurn(n: number, token: string): Promise<StoredCheckpointTurn> {
    const key = turnKey(this.jobId, token, n);
    const e = await this.kv.get(key);
    if (!e || e.operation !== 'PUT') throw this.corrupt('StoredCheckpointTurn', key, `turn ${n} is named by the head but not stored`);
    const turn = decodeStored(StoredCheckpointTurn, e);
    if (turn.turn !== n || turn.job_id !== this.jobId) throw this.corrupt('StoredCheckpointTurn', key, `holds turn ${turn.turn} of ${turn.job_id}`);
    await Promise.all(
      (turn.refs ?? []).map(async (r) => {
        const bk = blobKey(this.jobId, r.sha256);
        const blob = await this.kv.get(bk);
        const text = blob?.operation === 'PUT' ? blob.string() : undefined;
        if (text === undefined || createHash('sha256').update(text).digest('hex') !== r.sha256) {
          throw this.corrupt('StoredCheckpointTurn', bk, `the content of message ${r.message} of turn ${n} is missing or does not match its hash`);
        }
        this.stored.add(r.sha256);
        (turn.messages[r.message] as { content: unknown }).content = text;
      }),
    );
    return turn;
  }

  /** The token of the delivery that wrote turn `n`: the last writer that started at or before it. */
  private writerOf(head: StoredCheckpointHead, n: number): string {
    let token: string | undefined;
    for (const w of head.writers) if (w.from <= n) token = w.token;
    if (token === undefined) throw this.corrupt('StoredCheckpointHead', headKey(this.jobId), `no writer holds turn ${n}`, '/writers');
    return token;
  }

  private corrupt(record: string, key: string, message: string, path = ''): StoredStateError {
    return new StoredStateError(record, { bucket: this.o.bucket, key }, [{ path, message }]);
  }
}
