import { contracts, type SessionAppendRequest } from '@hermes/contracts';
import { serve, type Bus } from '@hermes/bus';
import { answer } from './reply-errors.js';
import type { SessionDirectory } from './session-directory.js';
import type { SessionStore } from './session-store.js';
import { scopeOf, type SessionNames } from './owner-scope.js';

type Subscription = ReturnType<typeof serve>;

/** Answers sessionAppend and sessionRead on the memory queue group; returns the subscriptions. */
export function serveSessionHandlers(opts: {
  bus: Bus;
  store: SessionStore;
  names: SessionNames;
  onAppended?: (req: SessionAppendRequest, stored: { user: string; session: string }) => void;
}): Subscription[] {
  const { bus, store, names } = opts;
  return [
    serve(bus, contracts.sessionAppend, async (req) => {
      const { sc, user, session } = await answer(bus, () => names.of(req));
      const messages = await answer(bus, () => store.append(user, session, req.messages));
      opts.onAppended?.(req, { user, session });
      return { messages: messages.map(sc.message) };
    }),
    serve(bus, contracts.sessionRead, async (req) => {
      const { sc, user, session } = await answer(bus, () => names.of(req));
      return { messages: (await answer(bus, () => store.read(user, session, req.limit))).map(sc.message) };
    }),
  ];
}

/** Answers sessionList and sessionDelete: a user's sessions as a whole. */
export function serveSessionDirectoryHandlers(opts: { bus: Bus; directory: SessionDirectory; names: SessionNames }): Subscription[] {
  const { bus, directory, names } = opts;
  return [
    serve(bus, contracts.sessionList, async (req) => {
      const sc = scopeOf(req);
      const page = await answer(bus, () =>
        directory.list(sc.user, { ...(req.limit !== undefined ? { limit: req.limit } : {}), ...(req.cursor !== undefined ? { cursor: req.cursor } : {}) }),
      );
      return { ...page, sessions: page.sessions.map((row) => ({ ...row, session_id: sc.sessionOnWire(row.session_id) })) };
    }),
    serve(bus, contracts.sessionDelete, (req) =>
      answer(bus, async () => {
        const { user, session } = await names.of(req);
        return directory.delete(user, session);
      }),
    ),
  ];
}
