import { contracts, type SessionAppendRequest } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
import { answer } from './reply-errors.js';
import type { SessionDirectory } from './session-directory.js';
import type { SessionStore } from './session-store.js';
import { scopeOf } from './owner-scope.js';

type Subscription = ReturnType<typeof serve>;

/** Answers sessionAppend and sessionRead on the memory queue group; returns the subscriptions. */
export function serveSessionHandlers(opts: { bus: Bus; store: SessionStore; onAppended?: (req: SessionAppendRequest) => void }): Subscription[] {
  const { bus, store } = opts;
  return [
    serve(bus, contracts.sessionAppend, async (req) => {
      const sc = scopeOf(req);
      const messages = await answer(bus, () => store.append(sc.user, sc.session(req.session_id), req.messages));
      opts.onAppended?.(req);
      return { messages: messages.map(sc.message) };
    }),
    serve(bus, contracts.sessionRead, async (req) => {
      const sc = scopeOf(req);
      return { messages: (await answer(bus, () => store.read(sc.user, sc.session(req.session_id), req.limit))).map(sc.message) };
    }),
  ];
}

/** Answers sessionList and sessionDelete: a user's sessions as a whole. */
export function serveSessionDirectoryHandlers(opts: { bus: Bus; directory: SessionDirectory }): Subscription[] {
  const { bus, directory } = opts;
  return [
    serve(bus, contracts.sessionList, async (req) => {
      const sc = scopeOf(req);
      const page = await answer(bus, () => directory.list(sc.user, { ...(req.limit !== undefined ? { limit: req.limit } : {}), ...(req.cursor !== undefined ? { cursor: req.cursor } : {}) }));
      return { ...page, sessions: page.sessions.map((row) => ({ ...row, session_id: sc.sessionOnWire(row.session_id) })) };
    }),
    serve(bus, contracts.sessionDelete, (req) => {
      const sc = scopeOf(req);
      return answer(bus, () => directory.delete(sc.user, sc.session(req.session_id)));
    }),
  ];
}
