import type { RunningService, ServiceContext } from '@hermes/bus';
import { loadApiKeys } from './api-keys.js';
import { createGatewayServer } from './http-server.js';
import type { GatewaySettings } from './settings.js';

/** Starts the HTTP API for `hostService`; `stop` closes the server and ends open event streams. */
export async function startGateway({ config, bus, logger }: ServiceContext<GatewaySettings>): Promise<RunningService> {
  const apiKeys = loadApiKeys(config);
  const gateway = createGatewayServer({ bus, apiKeys, logger });
  const { port } = await gateway.listen({ port: config.GATEWAY_PORT, host: config.GATEWAY_HOST });
  logger.info({ port, host: config.GATEWAY_HOST, api_keys: apiKeys.length }, 'gateway listening');
  return { stop: (timeoutMs) => gateway.close(timeoutMs) };
}
