import { contracts, wireError } from '@hermes/contracts';
import { ReplyError, serve, type Bus } from '@hermes/bus';
import { SessionForbiddenError, SessionStoreUnavailableError } from './memory-errors.js';
import type { SessionStore } from './session-store.js';

type Subscription = ReturnType<typeof serve>;

/** Answers sessionAppend and sessionRead on the memory queue group; returns the subscriptions. */
export function serveSessionHandlers(opts: { bus: Bus; store: SessionStore }): Subscription[] {
  const { bus, store } = opts;
  const answer = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      throw toReplyError(err, bus);
    }
  };
  return [
    serve(bus, contracts.sessionAppend, async (req) => ({
      messages: await answer(() => store.append(req.user_id, req.session_id, req.messages)),
    })),
    serve(bus, contracts.sessionRead, async (req) => ({
      messages: await answer(() => store.read(req.user_id, req.session_id, req.limit)),
    })),
  ];
}

// Local errors become wire errors here and nowhere else; anything unexpected is rethrown so
// `serve` logs it and answers `internal`.
function toReplyError(err: unknown, bus: Bus): unknown {
  if (err instanceof SessionForbiddenError) {
    return new ReplyError(wireError('session_forbidden', err.message, { session_id: err.sessionId }));
  }
  if (err instanceof SessionStoreUnavailableError) {
    bus.logger.warn({ err: err.message, operation: err.operation }, 'session store unavailable');
    return new ReplyError(wireError('unavailable', 'the session store (Redis) is unavailable; retry later', { operation: err.operation }));
  }
  return err;
}
