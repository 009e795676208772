import type { TestProject } from 'vitest/node';
import { startHermesStack } from '@hermes/devstack';
import { stackOptions } from '../stack.js';
import { startBroker } from './broker.js';

// ProvidedContext is augmented in ../shared-stack.ts.
/** Serves the e2e project's shared stock stack (see shared-stack.ts) and stops it after the run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const broker = await startBroker(async (modelBaseUrl) => {
    const stack = await startHermesStack(stackOptions({ modelBaseUrl }));
    return { info: { natsUrl: stack.natsUrl, redisUrl: stack.redisUrl, gatewayUrl: stack.gatewayUrl }, stop: () => stack.stop() };
  });
  project.provide('sharedStackBroker', broker.url);
  return () => broker.close();
}
