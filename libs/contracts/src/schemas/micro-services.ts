import { Type, type Static } from '@sinclair/typebox';

/**
 * One endpoint's counters in a NATS micro service's `$SRV.STATS` reply (the services API of every
 * official client: `@nats-io/services`, Go's `micro`, nats.py's service API).
 */
export const MicroEndpointStats = Type.Object(
  {
    name: Type.Optional(Type.String()),
    subject: Type.String(),
    num_requests: Type.Integer({ minimum: 0 }),
    num_errors: Type.Integer({ minimum: 0 }),
    average_processing_time: Type.Optional(Type.Number({ description: 'nanoseconds' })),
  },
  { title: 'MicroEndpointStats' },
);

/**
 * A `$SRV.STATS` reply, read as both generations of the API write it: newer clients list
 * `endpoints`, older ones (Go micro before 1.24, one endpoint per service) put the counters at the top.
 */
export const MicroServiceStats = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    id: Type.String({ minLength: 1 }),
    version: Type.String(),
    started: Type.Optional(Type.String()),
    endpoints: Type.Optional(Type.Array(MicroEndpointStats)),
    num_requests: Type.Optional(Type.Integer({ minimum: 0 })),
    num_errors: Type.Optional(Type.Integer({ minimum: 0 })),
    average_processing_time: Type.Optional(Type.Number({ description: 'nanoseconds' })),
  },
  { title: 'MicroServiceStats' },
);
export type MicroServiceStats = Static<typeof MicroServiceStats>;

/** The NATS services API's control subjects (ADR-32): `$SRV.<verb>` reaches every service, `$SRV.<verb>.<name>[.<id>]` one. */
export const MICRO_VERBS = ['PING', 'INFO', 'STATS', 'SCHEMA'] as const;
export type MicroVerb = (typeof MICRO_VERBS)[number];
export const microSubject = (verb: MicroVerb, name?: string, id?: string): string => ['$SRV', verb, ...(name ? [name] : []), ...(id ? [id] : [])].join('.');

/** The `type` each reply carries (ADR-32). */
export const MICRO_TYPES = {
  PING: 'io.nats.micro.v1.ping_response',
  INFO: 'io.nats.micro.v1.info_response',
  STATS: 'io.nats.micro.v1.stats_response',
  SCHEMA: 'io.nats.micro.v1.schema_response',
} as const satisfies Record<MicroVerb, string>;

/** What every reply carries: which service instance answered. */
const Identity = {
  type: Type.Optional(Type.String()),
  name: Type.String({ minLength: 1 }),
  id: Type.String({ minLength: 1 }),
  version: Type.String(),
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
};

/** A `$SRV.PING` reply. */
export const MicroServicePing = Type.Object(Identity, { title: 'MicroServicePing' });
export type MicroServicePing = Static<typeof MicroServicePing>;

/** One endpoint in `$SRV.INFO`: Hermes tool providers put the tool's ToolSpec JSON in `metadata["hermes.tool_spec"]`. */
export const MicroEndpointInfo = Type.Object(
  {
    name: Type.Optional(Type.String()),
    subject: Type.String({ minLength: 1 }),
    queue_group: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  },
  { title: 'MicroEndpointInfo' },
);

/**
 * A `$SRV.INFO` reply, read as both generations write it: newer clients list `endpoints` (objects),
 * Go micro before 1.24 lists its one endpoint's subject as a string (and has `subject`).
 */
export const MicroServiceInfo = Type.Object(
  {
    ...Identity,
    description: Type.Optional(Type.String()),
    endpoints: Type.Optional(Type.Union([Type.Array(MicroEndpointInfo), Type.Array(Type.String()), Type.Null()])),
    subject: Type.Optional(Type.String()),
  },
  { title: 'MicroServiceInfo' },
);
export type MicroServiceInfo = Static<typeof MicroServiceInfo>;

/**
 * A `$SRV.SCHEMA` reply of Go micro before 1.24 (one endpoint, a `schema.request` string): Hermes's
 * Go providers put their ToolSpec array there, since those versions have no endpoint metadata.
 */
export const MicroServiceSchema = Type.Object(
  { ...Identity, schema: Type.Optional(Type.Object({ request: Type.Optional(Type.String()), response: Type.Optional(Type.String()) })) },
  { title: 'MicroServiceSchema' },
);
export type MicroServiceSchema = Static<typeof MicroServiceSchema>;

/** The metadata key of an endpoint that holds its tool's ToolSpec as JSON text. */
export const TOOL_SPEC_METADATA = 'hermes.tool_spec';

/** A services API control request: its body is empty (any body is ignored). */
export const MicroControlRequest = Type.Unknown({
  title: 'MicroControlRequest',
  description: 'empty; the replies are the ADR-32 shapes, not the { ok } envelope',
});
