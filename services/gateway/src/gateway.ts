import type { RunningService, ServiceContext } from '@hermes/bus';
import { loadApiKeys } from './api-keys.js';
import { createGatewayServer } from './http-server.js';
import type { GatewaySettings } from './settings.js';

/** Starts the HTTP API for `hostService`; `stop` closes the server and ends open event streams. */
export async function startGateway({ config, bus, logger }: ServiceContext<GatewaySettings>): Promise<RunningService> {
  const apiKeys = loadApiKeys(config);
  const gateway = createGatewayServer({ bus, apiKeys, logger });
  const host = config.GATEWAY_HOST ?? config.HERMES_BIND_HOST;
  const { port } = await gateway.listen({ port: config.GATEWAY_PORT, host });
  logger.info({ port, host, api_keys: apiKeys.length }, 'gateway listening');
  return { stop: (timeoutMs) => gateway.close(timeoutMs) };
}
