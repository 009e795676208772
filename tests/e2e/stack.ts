import { createLogger } from '@hermes/telemetry';
import { Bus } from '@hermes/bus';
import { startHermesStack, type HermesStack, type HermesStackOptions } from '@hermes/devstack';
import type { ChildService } from '@hermes/testkit';

export const API_KEY = 'test-key-alice-0123456789';
export const ADMIN_KEY = 'test-key-admin-0123456789';
/** A second user of the default team: sees none of alice's tasks or approvals. */
export const BOB_KEY = 'test-key-bob-0123456789ab';

export interface Stack extends HermesStack {
  llm: NonNullable<HermesStack['llm']>;
  /** A test client on the same bus as the services. */
  bus: Bus;
}

export interface StackOptions {
  /** Use this NATS (e.g. a cluster's comma-separated URLs) instead of starting a nats-server. */
  natsUrl?: string;
  /** Use this Redis instead of starting a redis-server. */
  redisUrl?: string;
  runtimeAckWaitMs?: number;
  runtimeReplicas?: number;
  /** Extra environment for every service, over the defaults below. */
  env?: Record<string, string>;
  /** Extra environment per kind of service (e.g. `{ toolbus: { TOOL_CALL_LEASE_MS: '1000' } }`). */
  serviceEnv?: HermesStackOptions['serviceEnv'];
  /** The model endpoint the services call, instead of a scripted model of the stack's own. */
  modelBaseUrl?: string;
  /** Gateway API keys besides alice's and the admin's (e.g. users of other teams). */
  apiKeys?: HermesStackOptions['apiKeys'];
  /** How long each service may take to report ready (default 60 s). */
  readyTimeoutMs?: number;
}

/** The stack's settings: the stock ones every e2e file gets unless it asks for others. */
export function stackOptions(opts: StackOptions = {}): HermesStackOptions {
  return {
    apiKeys: [
      { key: API_KEY, user_id: 'alice', roles: ['user'] },
      { key: ADMIN_KEY, user_id: 'ops', roles: ['admin'] },
      { key: BOB_KEY, user_id: 'bob', roles: ['user'] },
      ...(opts.apiKeys ?? []),
    ],
    runtimeReplicas: opts.runtimeReplicas ?? 1,
    // Most tests script one agent loop per task; planning.e2e.test.ts turns planning on. Tool
    // providers (@hermes/tool-sdk, Go micro) are found by $SRV discovery: every 500 ms here, so a
    // provider a test starts is listed within a second and one it stops is gone within two.
    env: {
      LLM_MAX_RETRIES: '0',
      RUNTIME_ACK_WAIT_MS: String(opts.runtimeAckWaitMs ?? 2000),
      SHUTDOWN_TIMEOUT_MS: '3000',
      PLAN_MODE: 'single',
      TOOL_SRV_DISCOVERY_INTERVAL_MS: '500',
      ...opts.env,
    },
    ...(opts.serviceEnv ? { serviceEnv: opts.serviceEnv } : {}),
    ...(opts.natsUrl ? { natsUrl: opts.natsUrl } : {}),
    ...(opts.redisUrl ? { redisUrl: opts.redisUrl } : {}),
    // The scripted model's name, behind another endpoint (the shared stack's model router).
    ...(opts.modelBaseUrl ? { openai: { baseUrl: opts.modelBaseUrl, apiKey: 'scripted', model: 'scripted-demo' } } : {}),
    // Ten processes starting at once on a loaded 2-core CI machine can take longer than the kit's default.
    readyTimeoutMs: opts.readyTimeoutMs ?? 60_000,
  };
}

/** A bus client for a test, on the stack's NATS. */
export const testBus = (natsUrl: string) => Bus.connect({ servers: natsUrl, name: 'e2e-client', logger: createLogger({ service: 'e2e', level: 'silent' }) });

/**
 * The whole Hermes as real processes against the scripted model, plus a bus client for the test:
 * for a file that needs settings of its own or kills processes (the others share one stack, see
 * shared-stack.ts).
 */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const stack = await startHermesStack(stackOptions(opts));
  const bus = await testBus(stack.natsUrl);
  return {
    ...stack,
    llm: stack.llm!,
    bus,
    async stop() {
      await bus.drain().catch(() => {});
      await stack.stop();
    },
  };
}

/** The running replicas of a kind (`runtime` matches `runtime-1`, `runtime-2`, ...), skipping those that exited. */
export async function replicasOf(stack: HermesStack, kind: string): Promise<ChildService[]> {
  const out: ChildService[] = [];
  for (const [name, svc] of stack.services) {
    if (name !== kind && !name.startsWith(`${kind}-`)) continue;
    // setImmediate runs after the promise callbacks, so an exit that already happened wins the race.
    const exited = await Promise.race([svc.exited.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]);
    if (!exited) out.push(svc);
  }
  return out;
}

/**
 * The live runtime replica that logged starting a task's job. Waits for the line: the runtime's
 * stdout can reach the test after the LLM request the runtime made just after logging it.
 */
export async function runtimeHolding(stack: HermesStack, taskId: string, timeoutMs = 5000): Promise<ChildService | undefined> {
  const started = new RegExp(`job started.*${taskId}|${taskId}.*job started`);
  const runtimes = await replicasOf(stack, 'runtime');
  return Promise.any(runtimes.map(async (r) => (await r.waitForLog(started, timeoutMs), r))).catch(() => undefined);
}
