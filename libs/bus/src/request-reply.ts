import { headers as natsHeaders, NoRespondersError, TimeoutError, type Msg, type Subscription } from '@nats-io/transport-node';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import {
  extractTraceContext,
  injectTraceContext,
  limitsError,
  replyEnvelope,
  StoredStateError,
  validate,
  wireError,
  type RequestContract,
  type WireError,
} from '@hermes/contracts';
import type { Static, TSchema } from '@sinclair/typebox';
import { hermesTracer } from '@hermes/telemetry';
import type { Bus } from './bus.js';
import { decodeJson, encodeJson } from './codec.js';
import { OutgoingPayloadError, PayloadLimitError, RemoteError, ReplyError } from './bus-errors.js';
import { natsHandles } from './bus.js';
import { contractSubject } from './contract-subject.js';
import { isDependencyOutage } from './dead-letter.js';

const envelopes = new WeakMap<TSchema, TSchema>();
function envelopeFor(reply: TSchema): TSchema {
  let env = envelopes.get(reply);
  if (!env) envelopes.set(reply, (env = replyEnvelope(reply)));
  return env;
}

/**
 * Sends a typed request and returns the validated result. A structured error reply, a missing
 * responder or a timeout all throw RemoteError carrying a wire error the caller can pass on.
 */
export async function request<Req extends TSchema, Res extends TSchema>(
  bus: Bus,
  contract: RequestContract<Req, Res>,
  payload: Static<Req>,
  opts: { timeoutMs?: number; subject?: string } = {},
): Promise<Static<Res>> {
  const overLimit = contract.limits ? limitsError(payload, contract.limits, { what: contract.name }) : undefined;
  if (overLimit) throw new PayloadLimitError(contract.name, overLimit);
  const checked = validate(contract.request, payload);
  if (!checked.ok) throw new OutgoingPayloadError(contract.name, checked.issues);
  // A parameterised subject (e.g. one provider's toolExec) is given by the caller.
  const subject = contractSubject(contract, bus.subjects, opts.subject);
  const h = natsHeaders();
  injectTraceContext(h);
  let msg: Msg;
  try {
    msg = await natsHandles(bus).nc.request(subject, encodeJson(payload), { timeout: opts.timeoutMs ?? 5000, headers: h });
  } catch (err) {
    if (err instanceof NoRespondersError || (err as { cause?: unknown }).cause instanceof NoRespondersError) {
      throw new RemoteError(wireError('no_responders', `no ${contract.responder} replica is listening on ${subject}`), subject, { cause: err });
    }
    if (err instanceof TimeoutError) {
      throw new RemoteError(wireError('timeout', `${contract.responder} did not answer ${subject} in time`), subject, { cause: err });
    }
    throw err;
  }
  const decoded = decodeJson(msg.data);
  if (!decoded.ok) throw new RemoteError({ ...decoded.error, message: `reply on ${subject}: ${decoded.error.message}` }, subject);
  const reply = validate(envelopeFor(contract.reply), decoded.value);
  if (!reply.ok) {
    throw new RemoteError(wireError('invalid_payload', `reply on ${subject} does not match its contract`, { issues: reply.issues }), subject);
  }
  const env = reply.value as { ok: true; result: Static<Res> } | { ok: false; error: WireError };
  if (!env.ok) throw new RemoteError(env.error, subject);
  return env.result;
}

export interface RequestContext {
  readonly subject: string;
  readonly headers: Msg['headers'];
  /**
   * Runs `fn` right after the reply is sent, in the same tick: what it publishes leaves in the
   * same write to the socket as the reply, instead of ahead of it or in writes of its own. For
   * work that must not hold up the reply (a record of what was answered, an audit entry).
   */
  afterReply(fn: () => void): void;
}

/**
 * Answers a request contract on the service's queue group. A request over the contract's limits
 * gets a `payload_limit` reply naming the limit and path, before anything parses further; invalid
 * requests get an `invalid_payload` reply listing the problems; a thrown ReplyError is sent as is,
 * a StoredStateError as `corrupt_state` (not retryable); anything else
 * is logged and answered as `internal`. The handler never takes the subscription down.
 * A parameterised subject (one team's `teamTaskGet`) is served for every value of its
 * parameters; the handler reads them from `ctx.subject`.
 */
export function serve<Req extends TSchema, Res extends TSchema>(
  bus: Bus,
  contract: RequestContract<Req, Res>,
  handler: (req: Static<Req>, ctx: RequestContext) => Promise<Static<Res>>,
): Subscription {
  const subject = contract.subject(bus.subjects).replace(/\{[^}]+\}/g, '*');
  return natsHandles(bus).nc.subscribe(subject, {
    queue: bus.subjects.queueGroup(contract.responder),
    callback: (err, msg) => {
      if (err) {
        bus.logger.error({ err, subject }, 'subscription error');
        return;
      }
      void answer(bus, contract, handler, msg);
    },
  });
}

async function answer<Req extends TSchema, Res extends TSchema>(
  bus: Bus,
  contract: RequestContract<Req, Res>,
  handler: (req: Static<Req>, ctx: RequestContext) => Promise<Static<Res>>,
  msg: Msg,
): Promise<void> {
  const parent = extractTraceContext(msg.headers);
  const span = hermesTracer().startSpan(
    `process ${contract.name}`,
    {
      kind: SpanKind.SERVER,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': msg.subject, 'messaging.operation.type': 'process' },
    },
    parent,
  );
  await context.with(trace.setSpan(parent, span), async () => {
    let body: unknown;
    const after: (() => void)[] = [];
    const decoded = decodeJson(msg.data, contract.limits);
    const checked = decoded.ok ? validate(contract.request, decoded.value) : undefined;
    if (!decoded.ok) {
      body = { ok: false, error: decoded.error };
      bus.logger.warn({ subject: msg.subject, error: decoded.error }, 'undecodable request');
    } else if (!checked?.ok) {
      body = { ok: false, error: wireError('invalid_payload', `request on ${msg.subject} does not match ${contract.name}`, { issues: checked?.issues }) };
      bus.logger.warn({ subject: msg.subject, issues: checked?.issues }, 'invalid request');
    } else {
      try {
        const result = await handler(checked.value, { subject: msg.subject, headers: msg.headers, afterReply: (fn) => void after.push(fn) });
        const out = validate(contract.reply, result);
        if (!out.ok) throw new OutgoingPayloadError(`${contract.name} reply`, out.issues);
        body = { ok: true, result };
      } catch (err) {
        if (err instanceof ReplyError) {
          body = { ok: false, error: err.wire };
        } else if (err instanceof StoredStateError) {
          // A record this handler needed is unreadable: asking again cannot help, so say so
          // (with its bucket and key) rather than `internal`, which callers retry.
          bus.logger.error({ err, subject: msg.subject, bucket: err.bucket, key: err.key, issues: err.issues }, 'request handler read a corrupt record');
          body = { ok: false, error: err.toWire() };
        } else {
          // JetStream not answering this handler (a stream leader being elected, the server
          // restarting) is an outage, which callers wait out through their outage budget, not an
          // `internal` failure that costs the caller's work an attempt. Handlers are idempotent
          // per request (compare-and-set writes, de-duplicated publishes), so asking again is safe.
          const outage = isDependencyOutage(err);
          if (outage) bus.logger.warn({ err, subject: msg.subject }, 'request handler met a JetStream outage; answered unavailable');
          else bus.logger.error({ err, subject: msg.subject }, 'request handler failed');
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR });
          body = {
            ok: false,
            error: outage
              ? wireError('unavailable', `${contract.responder} could not reach JetStream to handle ${contract.name}; ask again shortly`)
              : wireError('internal', `${contract.responder} failed to handle ${contract.name}`),
          };
        }
      }
    }
    try {
      msg.respond(encodeReply(bus, contract, body));
    } catch (err) {
      bus.logger.warn({ err, subject: msg.subject }, 'could not send reply');
    }
    for (const fn of after) {
      try {
        fn();
      } catch (err) {
        bus.logger.error({ err, subject: msg.subject }, 'work after a reply failed');
      }
    }
    span.end();
  });
}

/** The reply's bytes; a result JSON cannot encode (a cycle, nesting too deep) is answered as `internal`, never left unanswered. */
function encodeReply(bus: Bus, contract: RequestContract, body: unknown): Uint8Array {
  try {
    return encodeJson(body);
  } catch (err) {
    bus.logger.error({ err, contract: contract.name }, 'reply cannot be encoded');
    return encodeJson({ ok: false, error: wireError('internal', `${contract.responder} could not encode its ${contract.name} reply`) });
  }
}
