// The few places that truly need a raw NATS handle (bus-internal helpers of sibling packages,
// benchmarks that time raw hops, tests that poke at streams) import it from here, by name.
export { natsHandles } from './bus.js';
export type { NatsHandles } from './bus.js';
