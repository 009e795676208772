import { admissionBounds, QueueGauge } from '@hermes/bus';
import type { HostServiceOptions, RunningService, ServiceContext } from '@hermes/service-host';
import { loadApiKeys } from './api-keys.js';
import { createGatewayServer } from './http-server.js';
import { gatewaySettings, type GatewaySettings } from './settings.js';

/** Starts the HTTP API for `hostService`; `stop` closes the server and ends open event streams. */
export async function startGateway({ config, bus, logger }: ServiceContext<GatewaySettings>): Promise<RunningService> {
  // A bad HERMES_API_KEYS_FILE is a ConfigError thrown here: hostService exits 78 for it as for env settings.
  const apiKeys = loadApiKeys(config);
  const gauge = new QueueGauge(bus).start();
  const gateway = createGatewayServer({
    bus,
    apiKeys,
    logger,
    corsOrigins: config.GATEWAY_CORS_ORIGINS,
    headersTimeoutMs: config.GATEWAY_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.GATEWAY_REQUEST_TIMEOUT_MS,
    maxConnections: config.GATEWAY_MAX_CONNECTIONS,
    approverRoles: config.HERMES_APPROVER_ROLES,
    ...(config.HERMES_TRACE_URL_TEMPLATE ? { traceUrlTemplate: config.HERMES_TRACE_URL_TEMPLATE } : {}),
    admission: { gauge, bounds: admissionBounds(config), taskTimeoutMs: config.TASK_TIMEOUT_MS },
  });
  const host = config.GATEWAY_HOST ?? config.HERMES_BIND_HOST;
  const { port } = await gateway.listen({ port: config.GATEWAY_PORT, host });
  logger.info({ port, host, api_keys: apiKeys.length }, 'gateway listening');
  return {
    stop: async (timeoutMs) => {
      gauge.stop();
      await gateway.close(timeoutMs);
    },
  };
}

/** The gateway: its settings, streams and wiring (main.ts hosts it). */
export const gatewayService: HostServiceOptions<typeof gatewaySettings> = {
  service: 'gateway',
  settings: gatewaySettings,
  uses: ['taskSubmit', 'taskEvents'],
  start: startGateway,
};
