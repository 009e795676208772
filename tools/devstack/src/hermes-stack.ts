import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  freePort,
  startChildService,
  startNatsServer,
  startRedisServer,
  startScriptedLlm,
  type ChildService,
  type NatsServerHandle,
  type RedisServerHandle,
  type Responder,
  type ScriptedLlm,
} from '@hermes/testkit';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** The built entry of a service (`npm run build` first). */
export const serviceEntry = (name: ServiceKind) => `${root}services/${name}/dist/main.js`;

export type ServiceKind = 'dispatcher' | 'runtime' | 'memory' | 'toolbus' | 'gateway';

export interface ApiKey {
  key: string;
  user_id: string;
  /** The key's team (absent: the default team). */
  team?: string;
  roles: string[];
}

export interface HermesStackOptions {
  /** Use this NATS instead of starting nats-server. */
  natsUrl?: string;
  /** Use this Redis instead of starting redis-server. */
  redisUrl?: string;
  /** A real OpenAI-compatible endpoint; without it a scripted model is started. */
  openai?: { baseUrl: string; apiKey: string; model?: string };
  /** Responder for the scripted model (default: the testkit's echoing one). */
  scriptedResponder?: Responder;
  gatewayPort?: number;
  apiKeys: ApiKey[];
  runtimeReplicas?: number;
  /** Extra environment for every service (e.g. RUNTIME_ACK_WAIT_MS). */
  env?: Record<string, string>;
  /** Extra environment for the replicas of one kind, over `env` (e.g. the dispatcher's HERMES_USER_ROLES). */
  serviceEnv?: Partial<Record<ServiceKind, Record<string, string>>>;
  /** How long each service may take to report ready (default: the test kit's). */
  readyTimeoutMs?: number;
  /** The memory service's embedded vector store directory (default: a temporary one, removed on stop). */
  memoryDataDir?: string;
}

export interface HermesStack {
  natsUrl: string;
  redisUrl: string;
  gatewayUrl: string;
  nats?: NatsServerHandle;
  redis?: RedisServerHandle;
  /** The scripted model, when no real endpoint was given. */
  llm?: ScriptedLlm;
  llmBaseUrl: string;
  /** Running services by replica name (`dispatcher`, `runtime-1`, ...). */
  services: Map<string, ChildService>;
  /** Starts one more replica; `env` goes over the stack's environment for this replica only. */
  startReplica(kind: ServiceKind, name: string, env?: Record<string, string>): Promise<ChildService>;
  stop(): Promise<void>;
}

/**
 * Starts a whole Hermes on this machine: nats-server (JetStream) and redis-server from PATH on
 * free ports unless URLs are given, a model endpoint, and each service as its own process,
 * resolving once every service reports ready. Used by `npm run up` and the end-to-end tests.
 */
export async function startHermesStack(opts: HermesStackOptions): Promise<HermesStack> {
  const [nats, redis, llm] = await Promise.all([
    opts.natsUrl ? undefined : startNatsServer(),
    opts.redisUrl ? undefined : startRedisServer(),
    opts.openai ? undefined : startScriptedLlm(opts.scriptedResponder ? { responder: opts.scriptedResponder } : {}),
  ]);
  const natsUrl = opts.natsUrl ?? nats!.url;
  const redisUrl = opts.redisUrl ?? redis!.url;
  const llmBaseUrl = opts.openai?.baseUrl ?? llm!.baseUrl;
  const gatewayPort = opts.gatewayPort ?? (await freePort());
  // Never the service's default (a path relative to the working directory, i.e. inside the checkout).
  const tempDataDir = opts.memoryDataDir ? undefined : mkdtempSync(join(tmpdir(), 'hermes-memory-'));
  const env: Record<string, string> = {
    MEMORY_DATA_DIR: opts.memoryDataDir ?? tempDataDir!,
    NATS_URL: natsUrl,
    REDIS_URL: redisUrl,
    OPENAI_BASE_URL: llmBaseUrl,
    OPENAI_API_KEY: opts.openai?.apiKey ?? 'scripted',
    HERMES_MODEL_WORKER: opts.openai?.model ?? (opts.openai ? 'gpt-4o-mini' : 'scripted-demo'),
    GATEWAY_PORT: String(gatewayPort),
    HERMES_API_KEYS: JSON.stringify(opts.apiKeys),
    ...opts.env,
  };
  const services = new Map<string, ChildService>();
  const startReplica = async (kind: ServiceKind, name: string, extra: Record<string, string> = {}) => {
    const healthPort = await freePort();
    const svc = await startChildService({
      name,
      entry: serviceEntry(kind),
      env: { ...env, ...opts.serviceEnv?.[kind], ...extra, HEALTH_PORT: String(healthPort) },
      healthPort,
      ...(opts.readyTimeoutMs ? { readyTimeoutMs: opts.readyTimeoutMs } : {}),
    });
    services.set(name, svc);
    return svc;
  };
  const stop = async () => {
    await Promise.all([...services.values()].map((s) => s.stop(5000)));
    await Promise.all([nats?.stop(), redis?.stop(), llm?.close()]);
    if (tempDataDir) rmSync(tempDataDir, { recursive: true, force: true });
  };
  try {
    // The dispatcher declares the streams and KV bucket the others rely on, so it starts first.
    await startReplica('dispatcher', 'dispatcher');
    await Promise.all([
      startReplica('memory', 'memory'),
      startReplica('toolbus', 'toolbus'),
      startReplica('gateway', 'gateway'),
      ...Array.from({ length: opts.runtimeReplicas ?? 1 }, (_, i) => startReplica('runtime', `runtime-${i + 1}`)),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    natsUrl,
    redisUrl,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    ...(nats ? { nats } : {}),
    ...(redis ? { redis } : {}),
    ...(llm ? { llm } : {}),
    llmBaseUrl,
    services,
    startReplica,
    stop,
  };
}
