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
import type { SessionNames } from './owner-scope.js';

type Subscription = ReturnType<typeof serve>;

export interface ContextHandlersOptions {
  bus: Bus;
  store: SessionStore;
  summaries: SummaryStore;
  summarizer: Summarizer;
  queue: SummaryQueue;
  locks: SessionLock;
  names: SessionNames;
  toolResultMaxTokens: number;
}

/** Answers sessionContext, sessionMessage, sessionPin, sessionSummarize and the session lock subjects. */
export function serveContextHandlers(o: ContextHandlersOptions): Subscription[] {
  const { bus } = o;
  return [
    serve(bus, contracts.sessionContext, (req) =>
      answer(bus, async () => {
        const { user, session } = await o.names.of(req);
        const summary = await o.summaries.summary(session);
        const [messages, pins] = await Promise.all([o.store.readFrom(user, session, summary?.coveredCount ?? 0), o.summaries.pins(session)]);
        const reply = assembleContext({
          messages,
          summary: summary?.text,
          pins,
          budget: req.context_limit - (req.reserve_output ?? 0) - (req.reserve_tools ?? 0),
          encoding: encodingFor(req.model),
          storedEncoding: o.store.encoding,
          toolResultMaxTokens: o.toolResultMaxTokens,
        });
        if (messages.length > 0) o.queue.consider(user, session);
        return reply;
      }),
    ),
    serve(bus, contracts.sessionMessage, (req) =>
      answer(bus, async () => {
        const { user, session, sc } = await o.names.of(req);
        const message = await o.store.getMessage(user, session, req.message_id);
        if (!message) throw new MessageNotFoundError({ sessionId: req.session_id, messageId: req.message_id });
        return { message: sc.message(message) };
      }),
    ),
    serve(bus, contracts.sessionPin, (req) =>
      answer(bus, async () => {
        const { user, session } = await o.names.of(req);
        const [added] = await o.summaries.pin(user, session, [{ kind: req.kind, text: req.text, source: 'user' }]);
        const pins = await o.summaries.pins(session);
        // Already pinned with the same text: the existing pin is the answer.
        const pin = added ?? pins.find((p) => p.text.trim().toLowerCase() === req.text.trim().toLowerCase()) ?? pins[pins.length - 1]!;
        return { pin, pins };
      }),
    ),
    serve(bus, contracts.sessionSummarize, (req) =>
      answer(bus, async () => {
        const { user, session } = await o.names.of(req);
        return o.summarizer.summarize(user, session, { wait: true, ...(req.keep_recent !== undefined ? { keepRecent: req.keep_recent } : {}) });
      }),
    ),
    // Nothing of the session is read or written: the messages come with the request.
    serve(bus, contracts.sessionCompact, (req) => answer(bus, () => o.summarizer.compact(req.messages))),
    serve(bus, contracts.sessionLock, (req) =>
      answer(bus, async () => {
        const { user, session } = await o.names.of(req);
        const lock = await o.locks.acquire(user, session, {
          ...(req.lease_ms !== undefined ? { leaseMs: req.lease_ms } : {}),
          ...(req.wait_ms !== undefined ? { waitMs: req.wait_ms } : {}),
          ...(req.group !== undefined ? { group: req.group } : {}),
        });
        return { token: lock.token, lease_ms: lock.leaseMs };
      }),
    ),
    serve(bus, contracts.sessionRenew, (req) =>
      answer(bus, async () => {
        const { user, session } = await o.names.of(req);
        const lock = await o.locks.renew(user, session, req.token, req.lease_ms);
        return { token: lock.token, lease_ms: lock.leaseMs };
      }),
    ),
    serve(bus, contracts.sessionUnlock, (req) =>
      answer(bus, async () => {
        const { user, session } = await o.names.of(req);
        return { released: await o.locks.release(user, session, req.token) };
      }),
    ),
  ];
}
