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
