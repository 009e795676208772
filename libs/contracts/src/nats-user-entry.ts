/** One user of a nats-server `users = [...]` list: a Hermes service, the CLI, a team's submitter or a tool provider. */
export interface NatsUserEntry {
  readonly user: string;
  /** The nats-server environment variable holding the password (`$NAME` in the config). */
  readonly passwordVariable: string;
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
  readonly allowResponses: boolean;
}

const list = (xs: readonly string[], indent: string) => `[\n${xs.map((x) => `${indent}  ${JSON.stringify(x)}`).join('\n')}\n${indent}]`;

/**
 * A user entry of nats-server.conf, every line indented by `indent`: one renderer for the users
 * file, the HERMES account of the accounts file and the tool providers in either, so the files
 * cannot drift apart in shape.
 */
export function renderNatsUserEntry(e: NatsUserEntry, indent: string): string {
  return [
    '{',
    `  user: ${JSON.stringify(e.user)}`,
    `  password: $${e.passwordVariable}`,
    '  permissions: {',
    `    publish: { allow: ${list(e.publish, '    ')} }`,
    `    subscribe: { allow: ${list(e.subscribe, '    ')} }`,
    ...(e.allowResponses ? ['    allow_responses: true'] : []),
    '  }',
    '}',
  ]
    .map((line) => `${indent}${line}`.replace(/\n/g, `\n${indent}`))
    .join('\n');
}
