import { inject } from 'vitest';
import { startScriptedLlm } from '@hermes/testkit';
import type { SharedStackInfo } from './shared-stack/broker.js';
import { testBus, type Stack } from './stack.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared stack's broker (shared-stack/global-setup.ts). */
    sharedStackBroker: string;
  }
}

/** What a file on the shared stack uses of it; a stack of the file's own (startStack) has the same. */
export type SharedStack = Pick<Stack, 'natsUrl' | 'redisUrl' | 'gatewayUrl' | 'llm' | 'bus' | 'stop'>;

/**
 * The stock stack, started once for the e2e project (on first use) and shared by the files that
 * need nothing else, with a scripted model of this file's own: its requests, answers and counts
 * are this file's alone. Tests on it must not depend on each other: unique goals and users' data,
 * no assertions on what the whole stack holds. `stop` gives the stack back (it keeps running).
 */
export async function sharedStack(): Promise<SharedStack> {
  const broker = inject('sharedStackBroker');
  const res = await fetch(`${broker}/stack`, { method: 'POST' });
  if (!res.ok) throw new Error(await res.text());
  const info = (await res.json()) as SharedStackInfo;
  const llm = await startScriptedLlm();
  await fetch(`${broker}/model?port=${llm.port}`, { method: 'PUT' });
  const bus = await testBus(info.natsUrl);
  return {
    ...info,
    llm,
    bus,
    async stop() {
      await fetch(`${broker}/model?port=${llm.port}`, { method: 'DELETE' });
      await bus.drain().catch(() => {});
      await llm.close();
    },
  };
}
