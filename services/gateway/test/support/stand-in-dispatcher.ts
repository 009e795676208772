import { ReplyError, serve, type Bus } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, makeTaskEvent, wireError, type TaskEventDataByKind, type TaskEventKind, type TaskView } from '@hermes/contracts';

/**
 * Plays the dispatcher's part on a real bus: answers a team's taskGet from an in-memory table
 * (reporting another user's or team's task as not found, as the dispatcher does) and publishes task events.
 */
export function standInDispatcher(bus: Bus) {
  const tasks = new Map<string, TaskView>();
  const reads = new Map<string, number>();
  const subscription = serve(bus, contracts.teamTaskGet, async (req, ctx) => {
    reads.set(req.task_id, (reads.get(req.task_id) ?? 0) + 1);
    const view = tasks.get(req.task_id);
    const team = ctx.subject.slice(bus.subjects.taskGet.length + 1);
    if (!view || (view.team ?? DEFAULT_TEAM) !== team || (req.user_id && view.user_id !== req.user_id)) {
      throw new ReplyError(wireError('not_found', `task ${req.task_id} not found`));
    }
    return view;
  });
  let eventNo = 0;
  return {
    addTask(taskId: string, userId: string, overrides: Partial<TaskView> = {}): TaskView {
      const now = new Date().toISOString();
      const view: TaskView = {
        task_id: taskId,
        user_id: userId,
        session_id: `s_${taskId}`,
        goal: 'say hello',
        status: 'accepted',
        created_at: now,
        updated_at: now,
        source_event: { source: '/test', id: taskId },
        attempts: 0,
        usage: { input_tokens: 0, output_tokens: 0 },
        ...overrides,
      };
      tasks.set(taskId, view);
      return view;
    },
    /** Publishes one event on the task's subject and returns its stream sequence. */
    async publish<K extends TaskEventKind>(kind: K, taskId: string, data: TaskEventDataByKind[K]): Promise<number> {
      const event = makeTaskEvent(kind, { id: `${taskId}:${kind}:${++eventNo}`, source: 'hermes/dispatcher', taskId, data });
      const ack = await bus.publish(contracts.taskEvents, event, { subject: bus.subjects.taskEvents(tasks.get(taskId)?.team ?? DEFAULT_TEAM, taskId) });
      return ack!.seq;
    },
    /** How many taskGet requests asked for this task. */
    readsOf: (taskId: string) => reads.get(taskId) ?? 0,
    stop: () => subscription.unsubscribe(),
  };
}
