import { Type, type Static } from '@sinclair/typebox';
import { Id, Team } from '@hermes/contracts';
import { admissionSettings } from '@hermes/bus';

/** One API key: who presents it, the team they belong to and which roles they hold (`admin` may act for any user of the team). */
export const ApiKeyEntry = Type.Object(
  {
    // A floor on key length keeps guessable keys ("test", "secret") out of a deployment.
    key: Type.String({ minLength: 16, description: 'the bearer token, at least 16 characters' }),
    user_id: Id,
    // The key acts only inside its team (default: the default team).
    team: Type.Optional(Team),
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 }),
  },
  { additionalProperties: false },
);
export type ApiKeyEntry = Static<typeof ApiKeyEntry>;

export const ApiKeyList = Type.Array(ApiKeyEntry, { minItems: 1 });

/** The gateway's own settings; `hostService` adds the common ones (NATS_URL, HEALTH_PORT, ...). */
export const gatewaySettings = Type.Object(
  {
    ...admissionSettings,
    GATEWAY_PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535, description: 'HTTP API port; 0 picks a free one' }),
    GATEWAY_HOST: Type.Optional(Type.String({ minLength: 1, description: 'interface the HTTP API listens on (default HERMES_BIND_HOST)' })),
    HERMES_API_KEYS: Type.Optional(
      Type.Array(ApiKeyEntry, { minItems: 1, description: 'JSON array of { key, user_id, team?, roles }; or use HERMES_API_KEYS_FILE' }),
    ),
    HERMES_API_KEYS_FILE: Type.Optional(Type.String({ minLength: 1, description: 'path to a JSON file holding the same array as HERMES_API_KEYS' })),
    GATEWAY_CORS_ORIGINS: Type.Array(Type.String({ pattern: '^https?://[^/\\s]+$' }), {
      default: [],
      maxItems: 64,
      description: 'JSON array of origins ("https://console.example.com") whose pages may call the API from a browser; empty (the default) turns CORS off',
    }),
    GATEWAY_HEADERS_TIMEOUT_MS: Type.Integer({
      default: 10_000,
      minimum: 100,
      description: "time a client has to send a request's headers; then 408 and the connection closes",
    }),
    GATEWAY_REQUEST_TIMEOUT_MS: Type.Integer({
      default: 30_000,
      minimum: 100,
      description: 'time a client has to send a whole request (headers and body); event streams are responses and not bounded by it',
    }),
    HERMES_TRACE_URL_TEMPLATE: Type.Optional(
      Type.String({
        pattern: '\\{trace_id\\}',
        description: "the tracing UI's page of a trace, {trace_id} replaced (e.g. http://localhost:16686/trace/{trace_id}); the console links each task to it",
      }),
    ),
    HERMES_APPROVER_ROLES: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      default: [],
      maxItems: 32,
      description:
        "JSON array of roles whose holders decide approvals of every user's tasks of their team (admin always does); when set, a task's owner without one of them may not decide its approvals",
    }),
    GATEWAY_MAX_CONNECTIONS: Type.Integer({
      default: 1024,
      minimum: 1,
      description: 'open connections (event streams included) the gateway holds; one more is closed at once',
    }),
  },
  {
    // There are no default keys: a gateway that nobody can call (or everybody can) is a misconfiguration.
    anyOf: [{ required: ['HERMES_API_KEYS'] }, { required: ['HERMES_API_KEYS_FILE'] }],
  },
);
export type GatewaySettings = Static<typeof gatewaySettings>;
