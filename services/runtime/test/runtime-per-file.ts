import { afterAll, beforeAll, beforeEach } from 'vitest';
import { cleanupAll, defaultResponder, startNatsServer, startScriptedLlm, type NatsServerHandle, type ScriptedLlm } from '@hermes/testkit';
import { runtimeFixture, type FixtureOptions, type RuntimeFixture } from './runtime-fixture.js';

/**
 * One nats-server and one scripted model for a test file (the model's queue, responder and
 * recorded requests reset before each test), and runtime fixtures on them, closed after the file.
 * Call at the top level of the file.
 */
export function runtimePerFile(): { readonly llm: ScriptedLlm; start(opts?: FixtureOptions): Promise<RuntimeFixture> } {
  let nats: NatsServerHandle | undefined;
  let llm: ScriptedLlm | undefined;
  const fixtures: RuntimeFixture[] = [];
  beforeAll(async () => {
    [nats, llm] = await Promise.all([startNatsServer(), startScriptedLlm()]);
  });
  beforeEach(() => {
    llm!.clearQueue();
    llm!.setResponder(defaultResponder);
    llm!.resetStats();
  });
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.close()));
    await cleanupAll();
  });
  return {
    get llm() {
      if (!llm) throw new Error('the scripted model starts in beforeAll');
      return llm;
    },
    async start(opts = {}) {
      const f = await runtimeFixture(nats!.url, llm!, opts);
      fixtures.push(f);
      return f;
    },
  };
}
