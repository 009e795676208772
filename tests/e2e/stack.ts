import { createLogger } from '@hermes/telemetry';
import { Bus } from '@hermes/bus';
import { startHermesStack, type HermesStack } from '@hermes/devstack';

export const API_KEY = 'test-key-alice-0123456789';
export const ADMIN_KEY = 'test-key-admin-0123456789';

export interface Stack extends HermesStack {
  llm: NonNullable<HermesStack['llm']>;
  /** A test client on the same bus as the services. */
  bus: Bus;
}

/** The whole Hermes as real processes against the scripted model, plus a bus client for the test. */
export async function startStack(opts: { runtimeAckWaitMs?: number; runtimeReplicas?: number } = {}): Promise<Stack> {
  const stack = await startHermesStack({
    apiKeys: [
      { key: API_KEY, user_id: 'alice', roles: ['user'] },
      { key: ADMIN_KEY, user_id: 'ops', roles: ['admin'] },
    ],
    runtimeReplicas: opts.runtimeReplicas ?? 1,
    env: { LLM_MAX_RETRIES: '0', RUNTIME_ACK_WAIT_MS: String(opts.runtimeAckWaitMs ?? 2000), SHUTDOWN_TIMEOUT_MS: '3000' },
  });
  const bus = await Bus.connect({ servers: stack.natsUrl, name: 'e2e-client', logger: createLogger({ service: 'e2e', level: 'silent' }) });
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
