import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Static, TObject } from '@sinclair/typebox';
import { ConfigError, commonSettings, loadConfig, natsConnectionSettings } from '@hermes/config';
import type { ServiceName } from '@hermes/contracts';
import { createLogger, startHealthServer, startTelemetry, TelemetryConfigError, type Liveness, type Logger } from '@hermes/telemetry';
import { Bus, observeConsumers, type ConsumerKey, type StreamKey, type StreamTuning } from '@hermes/bus';
import { installShutdown } from './shutdown.js';

type CommonConfig = Static<TObject<typeof commonSettings>>;

export interface ServiceContext<C> {
  config: C & CommonConfig;
  bus: Bus;
  logger: Logger;
}

/** What a service hands back once its handlers run: how to stop taking and finish work. */
export interface RunningService {
  stop(timeoutMs: number): Promise<void>;
}

export interface HostServiceOptions<S extends TObject> {
  service: ServiceName;
  /** The service's own settings; the common ones (NATS_URL, HEALTH_PORT, ...) are added. */
  settings: S;
  /** Streams this service owns: created, and updated to its config. */
  streams?: StreamKey[];
  /** Streams it only publishes to or reads: created if absent, otherwise left to their owner. */
  uses?: StreamKey[];
  consumers?: ConsumerKey[];
  tuning?: (config: Static<S> & CommonConfig) => StreamTuning;
  start(ctx: ServiceContext<Static<S>>): Promise<RunningService>;
}

/**
 * The whole life of a service process: validated config (exit 78 naming the bad setting),
 * telemetry, bus connection, idempotent stream/consumer declaration, health probes (ready only
 * after all of that), and a bounded graceful shutdown on SIGTERM. `main.ts` files only call this.
 */
export async function hostService<S extends TObject>(opts: HostServiceOptions<S>): Promise<void> {
  const config = exitOnConfigError(() => serviceConfig(opts));
  const logger = createLogger({
    service: opts.service,
    level: config.LOG_LEVEL,
    userId: config.LOG_USER_ID,
    ...(config.LOG_USER_ID_SALT ? { userIdSalt: config.LOG_USER_ID_SALT } : {}),
  });
  // Until start-up completes there is nothing to drain: a SIGTERM (e.g. while NATS is still
  // unreachable) just ends the process cleanly.
  const early = () => {
    logger.info('signal before ready; exiting');
    process.exit(0);
  };
  process.once('SIGTERM', early);
  process.once('SIGINT', early);
  const version = serviceVersion();
  const telemetry = await exitOnConfigError(() =>
    startTelemetry({
      service: opts.service,
      ...(version ? { version } : {}),
      ...(config.METRICS_PORT !== undefined ? { metricsPort: config.METRICS_PORT, metricsHost: config.HERMES_BIND_HOST } : {}),
    }).catch((err: unknown) => {
      // An OTLP protocol Hermes does not speak: exit 78 naming it, like any bad setting.
      throw err instanceof TelemetryConfigError ? new ConfigError(opts.service, [{ setting: err.setting, message: err.message }], { cause: err }) : err;
    }),
  );
  if (telemetry.metricsPort !== undefined) logger.info({ metrics_port: telemetry.metricsPort }, 'metrics endpoint listening');
  let ready = false;
  let live: () => Liveness = () => ({ live: true });
  const health = await startHealthServer({ port: config.HEALTH_PORT, host: config.HERMES_BIND_HOST, ready: () => ready, live: () => live() });
  logger.info({ health_port: health.port }, 'health server listening');

  const bus = await Bus.connect({
    ...natsConnectionSettings(config),
    name: `hermes-${opts.service}`,
    logger,
    // A service's own tuning may set a bound of its own (the runtime's RUNTIME_MAX_ATTEMPTS).
    tuning: {
      maxDeliveries: config.HERMES_MAX_DELIVERIES,
      replicas: config.HERMES_JS_REPLICAS,
      outageBudgetMs: config.HERMES_OUTAGE_BUDGET_MS,
      ...opts.tuning?.(config),
    },
    livenessAckWaits: config.HERMES_LIVENESS_ACK_WAITS,
  });
  live = () => consumerLiveness(bus);
  if (opts.streams?.length) await bus.ensureStreams(opts.streams);
  if (opts.uses?.length) await bus.ensureStreams(opts.uses, { createOnly: true });
  if (opts.consumers?.length) await bus.ensureConsumers(opts.consumers);
  observeConsumers(bus, opts.consumers ?? []);
  // Some settings are only checked once start reads them (a bad HERMES_API_KEYS_FILE): the same exit 78.
  const running = await exitOnConfigError(() => opts.start({ config, bus, logger }));
  ready = true;
  logger.info('ready');

  process.off('SIGTERM', early);
  process.off('SIGINT', early);
  installShutdown({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    steps: [
      { name: 'not ready', run: async () => void (ready = false) },
      { name: 'stop handlers', run: () => running.stop(Math.max(100, config.SHUTDOWN_TIMEOUT_MS - 1000)) },
      { name: 'drain bus', run: () => bus.drain() },
      { name: 'telemetry', run: () => telemetry.shutdown() },
      { name: 'health server', run: () => health.close() },
    ],
  });
}

/** A service's settings and the common ones, read from `env` as `hostService` reads them (tests pass their own env). */
export function serviceConfig<S extends TObject>(
  opts: Pick<HostServiceOptions<S>, 'service' | 'settings'>,
  env?: Record<string, string | undefined>,
): Static<S> & CommonConfig {
  const schema = { ...opts.settings, properties: { ...commonSettings, ...opts.settings.properties } } as unknown as S;
  return loadConfig(schema, { service: opts.service, ...(env ? { env } : {}) }) as Static<S> & CommonConfig;
}

/** Runs `step`; a ConfigError from it ends the process with exit 78 (EX_CONFIG) and its message on stderr. */
function exitOnConfigError<T>(step: () => T): T {
  const exit = (err: unknown): never => {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(78);
  };
  try {
    const out = step();
    return (out instanceof Promise ? out.catch(exit) : out) as T;
  } catch (err) {
    return exit(err);
  }
}

/** Not live while a work consumer is stalled; the 503 body names each one. */
function consumerLiveness(bus: Bus): Liveness {
  const stalled = bus.progress.stalled();
  if (stalled.length === 0) return { live: true };
  bus.logger.error({ stalled }, 'work consumers make no progress; not live');
  return { live: false, detail: { reason: 'consumer_stalled', consumers: stalled } };
}

/** The version of the package whose entry point runs (services/<name>/package.json), for `service.version`. */
function serviceVersion(): string | undefined {
  let dir = process.argv[1] ? dirname(resolve(process.argv[1])) : undefined;
  for (let i = 0; dir && i < 4; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown };
      return typeof pkg.version === 'string' ? pkg.version : undefined;
    } catch {
      // No package.json here: one folder up.
    }
  }
  return undefined;
}
