import { Type, type Static } from '@sinclair/typebox';
import { loadConfig } from '@hermes/config';
import type { Logger } from '@hermes/telemetry';
import { contracts, MAX_REVIEW_ROUNDS, ownerKey, type Owner } from '@hermes/contracts';
import { admissionBounds, admissionSettings, consumeContract, lastTaskEvent, QueueGauge, serve, startWorkConsumer, type Bus } from '@hermes/bus';
import type { HostServiceOptions } from '@hermes/service-host';
import { TaskStore } from './task-store.js';
import { TaskIntake } from './task-intake.js';
import { getTask, listTasks, teamOfRequest } from './task-queries.js';
import type { TaskRef } from './task-events.js';
import { TaskIndex } from './task-index.js';
import { PlanCoordinator } from './plan-coordinator.js';
import { TaskTimers } from './task-timers.js';
import { TaskMetrics } from './task-metrics.js';
import { rejectDeadSubmission } from './dead-submissions.js';
import { ScheduleStore } from './schedule-store.js';
import { Scheduler } from './scheduler.js';
import { serveScheduleRequests } from './schedule-requests.js';
import { TriggerStore } from './trigger-store.js';
import { serveTriggerRequests } from './trigger-requests.js';
import { TriggerFirer } from './trigger-firer.js';

const settings = Type.Object({
  ...admissionSettings,
  DISPATCHER_CONCURRENCY: Type.Integer({ default: 32, minimum: 1, description: 'submissions and results handled at once per replica' }),
  HERMES_USER_ROLES: Type.Object(
    { default: Type.Array(Type.String(), { default: ['user'] }), users: Type.Record(Type.String(), Type.Array(Type.String()), { default: {} }) },
    {
      default: { default: ['user'], users: {} },
      description:
        'JSON { "default": [roles], "users": { "<user_id>": [roles], "<team>/<user_id>": [roles] } }: roles tools are checked against (a bare user id is a user of the default team)',
    },
  ),
  TASK_DUPLICATE_WINDOW_MS: Type.Integer({ default: 120_000, minimum: 1000, description: 'JetStream Nats-Msg-Id de-duplication window' }),
  PLAN_MODE: Type.Union([Type.Literal('single'), Type.Literal('auto')], {
    default: 'auto',
    description:
      'auto: a planner splits each task into a DAG of subtasks (a simple task is one subtask); single: one agent job with the goal, no planning (docs/planning.md)',
  }),
  PLAN_MAX_SUBTASKS: Type.Integer({ default: 12, minimum: 1, maximum: 100, description: 'most subtasks in one plan or re-plan' }),
  SUBTASK_MAX_RETRIES: Type.Integer({ default: 2, minimum: 0, maximum: 10, description: 'retries of a subtask that failed with a retryable error' }),
  SUBTASK_RETRY_BASE_MS: Type.Integer({
    default: 1000,
    minimum: 10,
    description: 'back-off before the first retry of a subtask; doubled for each further one',
  }),
  SUBTASK_TIMEOUT_MS: Type.Integer({ default: 600_000, minimum: 1000, description: 'a subtask job running longer fails (retryable subtask_timeout)' }),
  MAX_REPLANS: Type.Integer({ default: 2, minimum: 0, maximum: 10, description: 're-plans per task after subtasks failed for good' }),
  REVIEW_ROUNDS: Type.Integer({
    default: 1,
    minimum: 0,
    maximum: MAX_REVIEW_ROUNDS,
    description:
      'how often a reviewer may send subtasks back, for a task that asks for a review (or whose plan ends in one) without review_rounds (docs/planning.md#review)',
  }),
  ASK_USER_TIMEOUT_MS: Type.Integer({
    default: 86_400_000,
    minimum: 1000,
    // Below the checkpoints' 7-day TTL: the answer resumes from the asking job's checkpoint.
    maximum: 518_400_000,
    description: 'how long a question a task asked (ask_user) waits for its answer; the task deadline does not run meanwhile',
  }),
  ASK_USER_TIMEOUT_POLICY: Type.Union([Type.Literal('fail'), Type.Literal('continue')], {
    default: 'fail',
    description:
      'what an unanswered question does at ASK_USER_TIMEOUT_MS: fail ends the task input_timeout; continue resumes it telling the model nobody answered',
  }),
  SCHEDULE_TICK_MS: Type.Integer({
    default: 1000,
    minimum: 100,
    maximum: 60_000,
    description: 'how often each replica looks for due schedule firings (docs/schedules.md)',
  }),
  SCHEDULE_GRACE_MS: Type.Integer({
    default: 60_000,
    minimum: 100,
    description:
      "how late a schedule firing may be and still be on time; firings later than that (every dispatcher was down) are missed and the schedule's policy decides",
  }),
  DISPATCHER_TAKEOVER_MS: Type.Integer({
    default: 2000,
    minimum: 200,
    maximum: 600_000,
    description:
      'how long a job claimed but not marked sent, or a task ended but not announced, waits before another replica acts for the replica that wrote it (which is then presumed dead)',
  }),
});

export type DispatcherConfig = Static<typeof settings>;

/** Reads the dispatcher's settings from `env` (defaults for the rest), as the service does at start. */
export function dispatcherConfig(env: Record<string, string> = {}): DispatcherConfig {
  return loadConfig(settings, { service: 'dispatcher', env });
}

/** The dispatcher's parts, connected as the service connects them (tests drive them directly). */
export async function assembleDispatcher({ bus, config, logger, gauge }: { bus: Bus; config: DispatcherConfig; logger: Logger; gauge?: QueueGauge }) {
  // Roles are granted per owner: '<team>/<user>' in HERMES_USER_ROLES (a bare user id is the default team's).
  const rolesOf = (owner: Owner): string[] => config.HERMES_USER_ROLES.users[ownerKey(owner)] ?? config.HERMES_USER_ROLES.default;
  const store = new TaskStore(await bus.kv('tasks'));
  const index = new TaskIndex(await bus.kv('taskIndex'));
  const metrics = new TaskMetrics();
  const coordinator = new PlanCoordinator({
    metrics,
    bus,
    store,
    index,
    logger,
    rolesOf,
    settings: {
      maxSubtasks: config.PLAN_MAX_SUBTASKS,
      maxRetries: config.SUBTASK_MAX_RETRIES,
      maxReplans: config.MAX_REPLANS,
      retryBaseMs: config.SUBTASK_RETRY_BASE_MS,
      subtaskTimeoutMs: config.SUBTASK_TIMEOUT_MS,
      redispatchAfterMs: config.DISPATCHER_TAKEOVER_MS,
      inputTimeoutMs: config.ASK_USER_TIMEOUT_MS,
      inputTimeoutPolicy: config.ASK_USER_TIMEOUT_POLICY,
      reviewRounds: config.REVIEW_ROUNDS,
    },
  });
  const intake = new TaskIntake({
    bus,
    store,
    logger,
    index,
    coordinator,
    planMode: config.PLAN_MODE,
    taskTimeoutMs: config.TASK_TIMEOUT_MS,
    metrics,
    ...(gauge ? { admission: { gauge, bounds: admissionBounds(config) } } : {}),
  });
  return { store, index, metrics, coordinator, intake, rolesOf };
}

/**
 * Answers the task queries. The bare subjects answer for every team (operators and the toolbus,
 * which asks by task id, inside the HERMES account); a team's own subjects, the only ones its
 * account can reach, only from that team's tasks. `taskGet` carries the owner's roles and what a
 * running task waits for, read from the last event under the task's team.
 */
export function serveTaskQueries(
  bus: Bus,
  { store, index, coordinator, rolesOf }: { store: TaskStore; index: TaskIndex; coordinator: PlanCoordinator; rolesOf: (owner: Owner) => string[] },
): ReturnType<typeof serve>[] {
  const s = bus.subjects;
  const lookups = { rolesOf, lastEvent: async (task: TaskRef) => (await lastTaskEvent(bus, task))?.event };
  return [
    serve(bus, contracts.taskGet, (req) => getTask(store, req, lookups)),
    serve(bus, contracts.taskList, (req) => listTasks(store, index, req)),
    serve(bus, contracts.taskCancel, (req) => coordinator.cancel(req)),
    serve(bus, contracts.taskInput, (req) => coordinator.answer(req)),
    serve(bus, contracts.teamTaskGet, (req, ctx) => getTask(store, req, { ...lookups, team: teamOfRequest(ctx.subject, s.taskGet) })),
    serve(bus, contracts.teamTaskList, (req, ctx) => listTasks(store, index, req, teamOfRequest(ctx.subject, s.taskList))),
    serve(bus, contracts.teamTaskCancel, (req, ctx) => coordinator.cancel(req, teamOfRequest(ctx.subject, s.taskCancel))),
    serve(bus, contracts.teamTaskInput, (req, ctx) => coordinator.answer(req, teamOfRequest(ctx.subject, s.taskInput))),
  ];
}

/** The dispatcher: its settings, streams and wiring (main.ts hosts it; tests start the same). */
export const dispatcherService: HostServiceOptions<typeof settings> = {
  service: 'dispatcher',
  settings,
  streams: ['taskSubmit', 'taskEvents', 'runtimeJobs', 'runtimeJobsAhead', 'runtimeResults', 'deadLetters', 'teamEvents'],
  consumers: ['dispatcherIntake', 'dispatcherResults', 'dispatcherTriggers'],
  tuning: (c) => ({ duplicateWindowMs: c.TASK_DUPLICATE_WINDOW_MS }),
  start: async ({ bus, config, logger }) => {
    const gauge = new QueueGauge(bus).start();
    const { store, index, coordinator, intake, rolesOf } = await assembleDispatcher({ bus, config, logger, gauge });
    const schedules = new ScheduleStore(await bus.kv('schedules'));
    const triggers = new TriggerStore(await bus.kv('triggers'));
    const subscriptions = [
      ...serveTaskQueries(bus, { store, index, coordinator, rolesOf }),
      ...serveScheduleRequests(bus, schedules),
      ...serveTriggerRequests(bus, triggers),
    ];
    const scheduler = new Scheduler({ store: schedules, bus, logger, tickMs: config.SCHEDULE_TICK_MS, graceMs: config.SCHEDULE_GRACE_MS });
    const timers = new TaskTimers({ store, index, logger, takeoverMs: config.DISPATCHER_TAKEOVER_MS, kick: (taskId) => coordinator.kick(taskId) });
    await timers.start();
    const intakeConsumer = await startWorkConsumer(
      bus,
      {
        stream: bus.subjects.streams.taskSubmit,
        durable: bus.subjects.consumers.dispatcherIntake,
        concurrency: config.DISPATCHER_CONCURRENCY,
        onDeadLetter: rejectDeadSubmission({ bus, logger, taskExists: async (taskId) => (await store.get(taskId)) !== undefined }),
      },
      (msg) => intake.handle(msg),
    );
    const resultConsumer = await consumeContract(
      bus,
      contracts.runtimeResults,
      { stream: bus.subjects.streams.runtimeResults, durable: bus.subjects.consumers.dispatcherResults, concurrency: config.DISPATCHER_CONCURRENCY },
      (result) => coordinator.onResult(result),
    );
    const firer = new TriggerFirer({ bus, store: triggers, logger });
    const triggerConsumer = await startWorkConsumer(
      bus,
      { stream: bus.subjects.streams.teamEvents, durable: bus.subjects.consumers.dispatcherTriggers, concurrency: config.DISPATCHER_CONCURRENCY },
      (msg) => firer.handle(msg),
    );
    await scheduler.start();
    return {
      stop: async (timeoutMs) => {
        gauge.stop();
        await scheduler.stop();
        await timers.stop();
        await Promise.all([intakeConsumer.stop(timeoutMs), resultConsumer.stop(timeoutMs), triggerConsumer.stop(timeoutMs)]);
        await Promise.all(subscriptions.map((sub) => sub.drain()));
      },
    };
  },
};
