import { HermesError } from '@hermes/contracts';

/** A setting is missing or invalid; the message names each bad setting and what it must be. */
export class ConfigError extends HermesError {
  constructor(
    readonly service: string,
    readonly problems: readonly { setting: string; message: string }[],
    options?: { cause?: unknown },
  ) {
    // The operator's fault, like a caller's: starting again with the same settings fails the same way.
    super('invalid_config', `invalid configuration for ${service}:\n${problems.map((p) => `  - ${p.setting}: ${p.message}`).join('\n')}`, {
      ...options,
      fault: 'caller',
    });
  }
}
