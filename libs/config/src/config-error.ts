/** A setting is missing or invalid; the message names each bad setting and what it must be. */
export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(
    readonly service: string,
    readonly problems: readonly { setting: string; message: string }[],
    options?: { cause?: unknown },
  ) {
    super(`invalid configuration for ${service}:\n${problems.map((p) => `  - ${p.setting}: ${p.message}`).join('\n')}`, options);
    this.name = new.target.name;
  }
}
