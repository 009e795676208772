import { Type } from '@sinclair/typebox';
import { Bus } from '@hermes/bus';
import { ConfigError, commonSettings, loadConfig, natsConnectionSettings } from '@hermes/config';
import { createLogger } from '@hermes/telemetry';
import { CliError, EXIT, type CliIo } from './command.js';

const cliSettings = Type.Object({
  NATS_URL: commonSettings.NATS_URL,
  NATS_USER: commonSettings.NATS_USER,
  NATS_PASSWORD: commonSettings.NATS_PASSWORD,
  NATS_TOKEN: commonSettings.NATS_TOKEN,
  NATS_CREDS_FILE: commonSettings.NATS_CREDS_FILE,
  NATS_INBOX_PREFIX: commonSettings.NATS_INBOX_PREFIX,
  HERMES_SUBJECT_PREFIX: commonSettings.HERMES_SUBJECT_PREFIX,
});

/** Connects to the bus the same way services do (NATS_URL, credentials, HERMES_SUBJECT_PREFIX). */
export async function connectBus(io: CliIo): Promise<Bus> {
  let config;
  try {
    config = loadConfig(cliSettings, { service: 'hermes', env: io.env });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage, { cause: err });
    throw err;
  }
  // Logs go to stderr and only from warn up, so stdout stays clean for output and --json.
  const logger = createLogger({ service: 'cli', level: io.env.LOG_LEVEL ?? 'warn', destination: io.stderr });
  try {
    return await Bus.connect({
      ...natsConnectionSettings(config),
      name: 'hermes-cli',
      // A service waits for NATS forever; a person at a terminal wants an answer now.
      waitOnFirstConnect: false,
      logger,
    });
  } catch (err) {
    throw new CliError(`cannot reach NATS at ${config.NATS_URL} (set NATS_URL): ${(err as Error).message}`, EXIT.failed, { cause: err });
  }
}
