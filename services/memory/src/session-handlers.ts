import { contracts } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
import { answer } from './reply-errors.js';
import type { SessionDirectory } from './session-directory.js';
import type { SessionStore } from './session-store.js';

type Subscription = ReturnType<typeof serve>;

/** Answers sessionAppend and sessionRead on the memory queue group; returns the subscriptions. */
export function serveSessionHandlers(opts: { bus: Bus; store: SessionStore; onAppended?: (userId: string, sessionId: string) => void }): Subscription[] {
  const { bus, store } = opts;
  return [
    serve(bus, contracts.sessionAppend, async (req) => {
      const messages = await answer(bus, () => store.append(req.user_id, req.session_id, req.messages));
      opts.onAppended?.(req.user_id, req.session_id);
      return { messages };
    }),
    serve(bus, contracts.sessionRead, async (req) => ({
      messages: await answer(bus, () => store.read(req.user_id, req.session_id, req.limit)),
    })),
  ];
}

/** Answers sessionList and sessionDelete: a user's sessions as a whole. */
export function serveSessionDirectoryHandlers(opts: { bus: Bus; directory: SessionDirectory }): Subscription[] {
  const { bus, directory } = opts;
  return [
    serve(bus, contracts.sessionList, (req) =>
      answer(bus, () => directory.list(req.user_id, { ...(req.limit !== undefined ? { limit: req.limit } : {}), ...(req.cursor !== undefined ? { cursor: req.cursor } : {}) })),
    ),
    serve(bus, contracts.sessionDelete, (req) => answer(bus, () => directory.delete(req.user_id, req.session_id))),
  ];
}
