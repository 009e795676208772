import { contracts } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
import { assembleContext } from './context-assembler.js';
import { MessageNotFoundError } from './memory-errors.js';
import { answer } from './reply-errors.js';
import type { SessionLock } from './session-lock.js';
import type { SessionStore } from './session-store.js';
import type { Summarizer } from './summarizer.js';
import type { SummaryQueue } from './summary-queue.js';
import type { SummaryStore } from './summary-store.js';
import { encodingFor } from '@hermes/llm';

type Subscription = ReturnType<typeof serve>;

export interface ContextHandlersOptions {
  bus: Bus;
  store: SessionStore;
  summaries: SummaryStore;
  summarizer: Summarizer;
  queue: SummaryQueue;
  locks: SessionLock;
  toolResultMaxTokens: number;
}

/** Answers sessionContext, sessionMessage, sessionPin, sessionSummarize and the session lock subjects. */
export function serveContextHandlers(o: ContextHandlersOptions): Subscription[] {
  const { bus } = o;
  return [
    serve(bus, contracts.sessionContext, (req) =>
      answer(bus, async () => {
        const summary = await o.summaries.summary(req.session_id);
        const [messages, pins] = await Promise.all([o.store.readFrom(req.user_id, req.session_id, summary?.coveredCount ?? 0), o.summaries.pins(req.session_id)]);
        const reply = assembleContext({
          messages,
          summary: summary?.text,
          pins,
          budget: req.context_limit - (req.reserve_output ?? 0) - (req.reserve_tools ?? 0),
          encoding: encodingFor(req.model),
          storedEncoding: o.store.encoding,
          toolResultMaxTokens: o.toolResultMaxTokens,
        });
        if (messages.length > 0) o.queue.consider(req.user_id, req.session_id);
        return reply;
      }),
    ),
    serve(bus, contracts.sessionMessage, (req) =>
      answer(bus, async () => {
        const message = await o.store.getMessage(req.user_id, req.session_id, req.message_id);
        if (!message) throw new MessageNotFoundError({ sessionId: req.session_id, messageId: req.message_id });
        return { message };
      }),
    ),
    serve(bus, contracts.sessionPin, (req) =>
      answer(bus, async () => {
        const [added] = await o.summaries.pin(req.user_id, req.session_id, [{ kind: req.kind, text: req.text, source: 'user' }]);
        const pins = await o.summaries.pins(req.session_id);
        // Already pinned with the same text: the existing pin is the answer.
        const pin = added ?? pins.find((p) => p.text.trim().toLowerCase() === req.text.trim().toLowerCase()) ?? pins[pins.length - 1]!;
        return { pin, pins };
      }),
    ),
    serve(bus, contracts.sessionSummarize, (req) =>
      answer(bus, () => o.summarizer.summarize(req.user_id, req.session_id, { wait: true, ...(req.keep_recent !== undefined ? { keepRecent: req.keep_recent } : {}) })),
    ),
    serve(bus, contracts.sessionLock, (req) =>
      answer(bus, async () => {
        const lock = await o.locks.acquire(req.user_id, req.session_id, {
          ...(req.lease_ms !== undefined ? { leaseMs: req.lease_ms } : {}),
          ...(req.wait_ms !== undefined ? { waitMs: req.wait_ms } : {}),
          ...(req.group !== undefined ? { group: req.group } : {}),
        });
        return { token: lock.token, lease_ms: lock.leaseMs };
      }),
    ),
    serve(bus, contracts.sessionRenew, (req) =>
      answer(bus, async () => {
        const lock = await o.locks.renew(req.user_id, req.session_id, req.token, req.lease_ms);
        return { token: lock.token, lease_ms: lock.leaseMs };
      }),
    ),
    serve(bus, contracts.sessionUnlock, (req) => answer(bus, async () => ({ released: await o.locks.release(req.user_id, req.session_id, req.token) }))),
  ];
}
