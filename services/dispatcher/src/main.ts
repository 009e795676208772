import { Type } from '@sinclair/typebox';
import { contracts } from '@hermes/contracts';
import { consumeContract, hostService, serve, startWorkConsumer } from '@hermes/bus';
import { TaskStore } from './task-store.js';
import { TaskIntake } from './task-intake.js';
import { ResultHandler } from './result-handler.js';
import { getTask } from './task-queries.js';
import { TaskCancel } from './task-cancel.js';

await hostService({
  service: 'dispatcher',
  settings: Type.Object({
    DISPATCHER_CONCURRENCY: Type.Integer({ default: 32, minimum: 1, description: 'submissions and results handled at once per replica' }),
    HERMES_USER_ROLES: Type.Object(
      { default: Type.Array(Type.String(), { default: ['user'] }), users: Type.Record(Type.String(), Type.Array(Type.String()), { default: {} }) },
      { default: { default: ['user'], users: {} }, description: 'JSON { "default": [roles], "users": { "<user_id>": [roles] } }: roles tools are checked against' },
    ),
    TASK_DUPLICATE_WINDOW_MS: Type.Integer({ default: 120_000, minimum: 1000, description: 'JetStream Nats-Msg-Id de-duplication window' }),
  }),
  streams: ['taskSubmit', 'taskEvents', 'runtimeJobs', 'runtimeResults'],
  consumers: ['dispatcherIntake', 'dispatcherResults'],
  tuning: (c) => ({ duplicateWindowMs: c.TASK_DUPLICATE_WINDOW_MS }),
  start: async ({ bus, config, logger }) => {
    const store = new TaskStore(await bus.kv(bus.subjects.buckets.tasks));
    const rolesOf = (userId: string) => config.HERMES_USER_ROLES.users[userId] ?? config.HERMES_USER_ROLES.default;
    const intake = new TaskIntake({ bus, store, logger, rolesOf });
    const results = new ResultHandler({ bus, store, logger });
    const queries = serve(bus, contracts.taskGet, (req) => getTask(store, req));
    const cancels = new TaskCancel({ bus, store, logger });
    const cancelling = serve(bus, contracts.taskCancel, (req) => cancels.cancel(req));
    const intakeConsumer = await startWorkConsumer(
      bus,
      { stream: bus.subjects.streams.taskSubmit, durable: bus.subjects.consumers.dispatcherIntake, concurrency: config.DISPATCHER_CONCURRENCY },
      (msg) => intake.handle(msg),
    );
    const resultConsumer = await consumeContract(
      bus,
      contracts.runtimeResults,
      { stream: bus.subjects.streams.runtimeResults, durable: bus.subjects.consumers.dispatcherResults, concurrency: config.DISPATCHER_CONCURRENCY },
      (result) => results.handle(result),
    );
    return {
      stop: async (timeoutMs) => {
        await Promise.all([intakeConsumer.stop(timeoutMs), resultConsumer.stop(timeoutMs)]);
        await Promise.all([queries.drain(), cancelling.drain()]);
      },
    };
  },
});
