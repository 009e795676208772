import type { TSchema } from '@sinclair/typebox';
import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { Id, teamField, validate, type RequestContract } from '@hermes/contracts';
import type { Caller } from './auth.js';
import { HttpError, httpErrorFromBus, sendJson } from './http-errors.js';
import { readJsonBody } from './json-body.js';
import type { RouteHandler } from './task-routes.js';

type Owned = { user_id: string; team?: string };
type Listed = { user_id: string | null; team?: string };

/** The bus requests and names behind one kind of owned record's routes (`/v1/schedules`, `/v1/triggers`). */
export interface OwnedRoutesOptions {
  bus: Bus;
  maxBodyBytes: number;
  kind: 'schedule' | 'trigger';
  /** The body of a create, and what to tell a caller whose body is not one. */
  spec: TSchema;
  specHint: string;
  create: RequestContract;
  get: RequestContract;
  list: RequestContract;
  update: RequestContract;
  remove: RequestContract<TSchema, TSchema>;
}

/**
 * A caller's records of one kind: they belong to the caller's team and user; an admin of the team
 * lists everyone's and reaches another user's with `?user=<id>`.
 */
export function createOwnedRoutes(o: OwnedRoutesOptions): Record<'create' | 'list' | 'get' | 'remove' | 'pause' | 'resume', RouteHandler> {
  const idField = `${o.kind}_id`;
  // The contracts' request types are checked by `request` against their schemas at run time.
  const ask = async (contract: RequestContract, payload: Record<string, unknown>): Promise<Record<string, unknown>> => {
    try {
      return (await request(o.bus, contract, payload as never)) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof OutgoingPayloadError) throw err;
      throw httpErrorFromBus(err);
    }
  };
  const idParam = (raw: string | undefined): string => {
    let id: string;
    try {
      id = decodeURIComponent(raw ?? '');
    } catch {
      id = '';
    }
    if (!validate(Id, id).ok)
      throw new HttpError(400, { code: `invalid_${o.kind}_id`, message: `${o.kind} id must be 1-128 characters of letters, digits, _ : @ -` });
    return id;
  };
  const setPaused =
    (paused: boolean): RouteHandler =>
    async ({ req, res, caller, params }) =>
      sendJson(res, 200, await ask(o.update, { ...ownerFor(req.url, caller), [idField]: idParam(params[0]), paused }));
  return {
    async create({ req, res, caller }) {
      const body = validate(o.spec, await readJsonBody(req, o.maxBodyBytes));
      if (!body.ok) throw new HttpError(400, { code: 'invalid_payload', message: `the body must be a ${o.kind}: ${o.specHint}`, issues: body.issues });
      sendJson(res, 201, await ask(o.create, { user_id: caller.user_id, ...teamField(caller.team), spec: body.value }));
    },
    async list({ req, res, caller }) {
      const asked = new URL(req.url ?? '/', 'http://x').searchParams.get('user');
      const listed: Listed = { user_id: caller.isAdmin ? asked : caller.user_id, ...teamField(caller.team) };
      sendJson(res, 200, await ask(o.list, listed));
    },
    async get({ req, res, caller, params }) {
      sendJson(res, 200, await ask(o.get, { ...ownerFor(req.url, caller), [idField]: idParam(params[0]) }));
    },
    async remove({ req, res, caller, params }) {
      const reply = await ask(o.remove, { ...ownerFor(req.url, caller), [idField]: idParam(params[0]) });
      if (!reply.deleted) throw new HttpError(404, { code: 'not_found', message: `no ${o.kind} ${String(reply[idField])}` });
      sendJson(res, 200, reply);
    },
    pause: setPaused(true),
    resume: setPaused(false),
  };
}

/** Whose record a request is about: the caller's, or for an admin the `?user=` of the team. */
function ownerFor(url: string | undefined, caller: Caller): Owned {
  const asked = new URL(url ?? '/', 'http://x').searchParams.get('user');
  const user_id = caller.isAdmin && asked ? asked : caller.user_id;
  if (!validate(Id, user_id).ok) throw new HttpError(400, { code: 'invalid_user_id', message: 'user must be 1-128 characters of letters, digits, _ : @ -' });
  return { user_id, ...teamField(caller.team) };
}
