import { Type } from '@sinclair/typebox';
import { ABSOLUTE_URI_PATTERN } from '@hermes/contracts';

/** Settings every service shares: bus, subjects, probes, logs. Spread into a service's schema. */
export const commonSettings = {
  NATS_URL: Type.String({ default: 'nats://127.0.0.1:4222', description: 'comma-separated NATS server URLs' }),
  NATS_USER: Type.Optional(Type.String()),
  NATS_PASSWORD: Type.Optional(Type.String()),
  NATS_TOKEN: Type.Optional(Type.String()),
  NATS_CREDS_FILE: Type.Optional(Type.String({ description: 'path to a NATS .creds file' })),
  NATS_INBOX_PREFIX: Type.Optional(
    Type.String({ pattern: '^[A-Za-z0-9_-]+$', description: 'prefix of reply inboxes (default _INBOX); the generated NATS users expect _INBOX_<user>' }),
  ),
  HERMES_SUBJECT_PREFIX: Type.String({ default: 'hermes', pattern: '^[A-Za-z0-9_-]{1,32}$', description: 'first token of every subject' }),
  HERMES_EVENT_SOURCE: Type.Optional(
    Type.String({
      pattern: ABSOLUTE_URI_PATTERN,
      maxLength: 256,
      description: 'absolute URI naming this deployment in the source of the CloudEvents Hermes emits (<uri>/<service>); default urn:hermes:<prefix>',
    }),
  ),
  // Loopback unless told otherwise, so a laptop's `npm run up` is not reachable from its network;
  // the image (Dockerfile), the Helm chart and docker-compose set 0.0.0.0, as probes come from outside.
  HERMES_BIND_HOST: Type.String({
    default: '127.0.0.1',
    minLength: 1,
    description: 'interface the health and metrics ports (and the gateway, unless GATEWAY_HOST is set) listen on; 0.0.0.0 in containers',
  }),
  HEALTH_PORT: Type.Integer({ default: 0, minimum: 0, maximum: 65535, description: 'port for /healthz and /readyz; 0 picks a free one' }),
  LOG_LEVEL: Type.Union(
    [Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace')],
    {
      default: 'info',
    },
  ),
  METRICS_PORT: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 65535, description: 'serve Prometheus metrics at :METRICS_PORT/metrics (9464 is the usual port); off when unset' }),
  ),
  LOG_USER_ID: Type.Union([Type.Literal('plain'), Type.Literal('hash'), Type.Literal('omit')], {
    default: 'plain',
    description: 'how user_id appears in log lines: as is, as a salted sha256 pseudonym (u_ + 16 hex), or not at all',
  }),
  LOG_USER_ID_SALT: Type.Optional(Type.String({ description: 'salt of LOG_USER_ID=hash (keep it secret, or hashes of guessable ids can be looked up)' })),
  HERMES_OUTAGE_BUDGET_MS: Type.Integer({
    default: 300_000,
    minimum: 0,
    description:
      "how long work waits out a dependency's outage (a service restarting, no JetStream leader) before its error counts: a work-queue delivery is kept and handled again, the runtime's requests are sent again",
  }),
  HERMES_JS_REPLICAS: Type.Integer({
    default: 1,
    minimum: 1,
    maximum: 5,
    description:
      'copies of every JetStream stream and KV bucket (3 in a 3-node cluster survives the loss of any node); raised in place on start, same value for every service',
  }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ default: 10_000, minimum: 100, description: 'bound on graceful shutdown after SIGTERM' }),
  HERMES_MAX_DELIVERIES: Type.Integer({
    default: 5,
    minimum: 1,
    maximum: 100,
    description: "deliveries of a work-queue message whose handler keeps failing before it is dead-lettered (the runtime's jobs use RUNTIME_MAX_ATTEMPTS)",
  }),
  HERMES_LIVENESS_ACK_WAITS: Type.Integer({
    default: 3,
    minimum: 1,
    maximum: 1000,
    description: '/healthz answers 503 when a work consumer has held a message for this many of its ack waits and settled nothing meanwhile',
  }),
};

/** How to reach and log in to NATS from the common settings: one reading for services and the CLI. */
export function natsConnectionSettings(config: {
  NATS_URL: string;
  HERMES_SUBJECT_PREFIX: string;
  HERMES_EVENT_SOURCE?: string | undefined;
  NATS_USER?: string | undefined;
  NATS_PASSWORD?: string | undefined;
  NATS_TOKEN?: string | undefined;
  NATS_CREDS_FILE?: string | undefined;
  NATS_INBOX_PREFIX?: string | undefined;
}): { servers: string; prefix: string; eventSource?: string; user?: string; password?: string; token?: string; credsFile?: string; inboxPrefix?: string } {
  return {
    servers: config.NATS_URL,
    prefix: config.HERMES_SUBJECT_PREFIX,
    ...(config.HERMES_EVENT_SOURCE ? { eventSource: config.HERMES_EVENT_SOURCE } : {}),
    ...(config.NATS_USER ? { user: config.NATS_USER, ...(config.NATS_PASSWORD !== undefined ? { password: config.NATS_PASSWORD } : {}) } : {}),
    ...(config.NATS_TOKEN ? { token: config.NATS_TOKEN } : {}),
    ...(config.NATS_CREDS_FILE ? { credsFile: config.NATS_CREDS_FILE } : {}),
    ...(config.NATS_INBOX_PREFIX ? { inboxPrefix: config.NATS_INBOX_PREFIX } : {}),
  };
}
