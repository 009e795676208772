/**
 * Where Hermes's CloudEvents say they come from and which schema their data follows. CloudEvents
 * consumers (SDKs, brokers, event catalogs) expect `source` to be an absolute URI that tells one
 * producer from another across deployments, and `dataschema` to resolve to the schema.
 */

/** Where the AsyncAPI document (docs/asyncapi.yaml) is published; `dataschema` points into it. */
export const PUBLISHED_ASYNCAPI_URL = 'https://github.com/hermes-agents/hermes/blob/main/docs/asyncapi.yaml';

/** Where the gateway's OpenAPI document (docs/openapi.yaml) is published. */
export const PUBLISHED_OPENAPI_URL = PUBLISHED_ASYNCAPI_URL.replace(/asyncapi\.yaml$/, 'openapi.yaml');

/** An absolute URI: a scheme, a colon and something after it (RFC 3986 §4.3). */
export const ABSOLUTE_URI_PATTERN = '^[A-Za-z][A-Za-z0-9+.-]*:[^\\s]+$';

/**
 * The deployment's event source when `HERMES_EVENT_SOURCE` is not set: a URN naming the subject
 * prefix, which already tells deployments on one NATS apart (`urn:hermes:hermes`).
 */
export function defaultEventSourceBase(prefix: string): string {
  return `urn:hermes:${prefix}`;
}

/** The `source` of events one service emits: the deployment's base, then `/<service>`. */
export function eventSourceFor(base: string, service: string): string {
  return `${base.replace(/\/+$/, '')}/${service}`;
}

/** The `dataschema` of an event whose data is the component schema titled `title` in the published document. */
export function dataSchemaFor(title: string): string {
  return `${PUBLISHED_ASYNCAPI_URL}#/components/schemas/${title}`;
}
