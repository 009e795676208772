import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { demoResponder } from '@hermes/testkit';
import { startHermesStack } from './hermes-stack.js';
import { startOrphanGuard } from './orphan-guard.js';
import { stopOnSignals } from './shutdown.js';

// `npm run up` lands here after installing and building: run everything until Ctrl-C, or a
// SIGTERM/SIGINT/SIGHUP to this process alone.
const env = process.env;
// Services stop within 5 s (then SIGKILL), nats-server and redis-server within 10 s: past this, kill.
const STOP_DEADLINE_MS = 20_000;
const apiKey = env.HERMES_DEV_API_KEY ?? `dev-${randomBytes(12).toString('hex')}`;
const useRealModel = Boolean(env.OPENAI_BASE_URL || env.OPENAI_API_KEY);

const say = (line = '') => process.stdout.write(`${line}\n`);

say(
  useRealModel
    ? `model: ${env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1'} (from OPENAI_BASE_URL/OPENAI_API_KEY)`
    : 'model: no OPENAI_BASE_URL/OPENAI_API_KEY set, so Hermes runs against the SCRIPTED DEMO MODEL (canned answers, offline).',
);
say('starting NATS, Redis and the five services...');
// Started first, so it is up before there is anything to guard; told the pids once all run.
const guard = startOrphanGuard();

const stack = await startHermesStack({
  ...(env.NATS_URL ? { natsUrl: env.NATS_URL } : {}),
  ...(env.REDIS_URL ? { redisUrl: env.REDIS_URL } : {}),
  ...(useRealModel
    ? {
        openai: {
          baseUrl: env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
          apiKey: env.OPENAI_API_KEY ?? '',
          ...(env.HERMES_MODEL_WORKER ? { model: env.HERMES_MODEL_WORKER } : {}),
        },
      }
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

// Before the banner: whoever reads it may send a signal (or a SIGKILL) at once.
const shutdown = stopOnSignals({
  stack,
  guard,
  deadlineMs: STOP_DEADLINE_MS,
  // Set by scripts/up.mjs, so a runner whose up.mjs was killed does not serve on alone.
  parentPid: env.HERMES_DEVSTACK_PARENT_PID ? Number(env.HERMES_DEVSTACK_PARENT_PID) : undefined,
  say,
});
say();
say('Hermes is running.');
say(`  HTTP API   ${stack.gatewayUrl}   (API key: ${apiKey})`);
say(`  console    ${stack.gatewayUrl}/console/   (log in with the API key)`);
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
say('Ctrl-C (or SIGTERM to this process) stops everything.');

for (const [name, svc] of stack.services) {
  void svc.exited.then((status) => {
    if (!shutdown.stopping) process.stderr.write(`${name} exited unexpectedly (${JSON.stringify(status)}); last lines:\n${svc.logs.slice(-20).join('\n')}\n`);
  });
}
