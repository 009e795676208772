import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { demoResponder } from '@hermes/testkit';
import { startHermesStack } from './hermes-stack.js';

// `npm run up` lands here after installing and building: run everything until Ctrl-C.
const env = process.env;
const apiKey = env.HERMES_DEV_API_KEY ?? `dev-${randomBytes(12).toString('hex')}`;
const useRealModel = Boolean(env.OPENAI_BASE_URL || env.OPENAI_API_KEY);

const say = (line = '') => process.stdout.write(`${line}\n`);

say(useRealModel ? `model: ${env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1'} (from OPENAI_BASE_URL/OPENAI_API_KEY)` : 'model: no OPENAI_BASE_URL/OPENAI_API_KEY set, so Hermes runs against the SCRIPTED DEMO MODEL (canned answers, offline).');
say('starting NATS, Redis and the five services...');

const stack = await startHermesStack({
  ...(env.NATS_URL ? { natsUrl: env.NATS_URL } : {}),
  ...(env.REDIS_URL ? { redisUrl: env.REDIS_URL } : {}),
  ...(useRealModel
    ? { openai: { baseUrl: env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', apiKey: env.OPENAI_API_KEY ?? '', ...(env.HERMES_MODEL_WORKER ? { model: env.HERMES_MODEL_WORKER } : {}) } }
    : { scriptedResponder: demoResponder }),
  ...(env.GATEWAY_PORT ? { gatewayPort: Number(env.GATEWAY_PORT) } : { gatewayPort: 8080 }),
  apiKeys: [{ key: apiKey, user_id: env.HERMES_DEV_USER ?? 'dev', roles: ['user', 'admin'] }],
  runtimeReplicas: Number(env.HERMES_RUNTIME_REPLICAS ?? 1),
  // Long-term memories of the local stack survive restarts (.hermes/ is ignored by git).
  memoryDataDir: resolve(env.MEMORY_DATA_DIR ?? '.hermes/memory'),
  env: { LOG_LEVEL: env.LOG_LEVEL ?? 'warn' },
}).catch((err: Error) => {
  process.stderr.write(`could not start Hermes: ${err.message}\n`);
  process.exit(1);
});

say();
say('Hermes is running.');
say(`  HTTP API   ${stack.gatewayUrl}   (API key: ${apiKey})`);
say(`  NATS       ${stack.natsUrl}`);
say(`  Redis      ${stack.redisUrl}`);
say(`  services   ${[...stack.services.keys()].join(', ')}`);
say();
say('Submit a task over HTTP and watch its events:');
say(`  curl -s -X POST ${stack.gatewayUrl}/v1/tasks -H 'authorization: Bearer ${apiKey}' -H 'content-type: application/json' -d '{"goal":"Say hello"}'`);
say(`  curl -N ${stack.gatewayUrl}/v1/tasks/<task_id>/events -H 'authorization: Bearer ${apiKey}'`);
say('Or on the bus with the CLI:');
say(`  NATS_URL=${stack.natsUrl} npx hermes run "Say hello"`);
say();
say('Ctrl-C stops everything.');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  say('\nstopping...');
  await stack.stop();
  say('stopped.');
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
for (const [name, svc] of stack.services) {
  void svc.exited.then((status) => {
    if (!stopping) process.stderr.write(`${name} exited unexpectedly (${JSON.stringify(status)}); last lines:\n${svc.logs.slice(-20).join('\n')}\n`);
  });
}
