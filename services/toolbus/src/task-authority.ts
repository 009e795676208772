import { contracts, isTerminalStatus, ownerFields, ownerOf, sameOwner, wireError, type Owner, type TaskView, type ToolCallRequest } from '@hermes/contracts';
import { RemoteError, ReplyError, request, type Bus } from '@hermes/bus';

export interface TaskAuthorityOptions {
  bus: Bus;
  /** How long a live task's record is reused before it is asked for again. */
  cacheMs: number;
  /** How long to wait for the dispatcher's answer. */
  timeoutMs?: number;
}

/** What the toolbus takes from a task record: whose task it is (team and user), their roles, the task's allow-list. */
interface TaskFacts {
  owner: Owner;
  roles: readonly string[];
  allow: readonly string[] | undefined;
  status: TaskView['status'];
  at: number;
}

/** Ended tasks never change again; this many are remembered (oldest dropped) so replays of their calls stay cheap. */
const MAX_REMEMBERED = 10_000;

/**
 * A tool call's owner (team, user) and roles come from the task record (the dispatcher's `taskGet`,
 * asked by task id whatever the task's team; the roles are its owner's), never from the call: a
 * runtime (or anyone able to publish on the toolCall subject) cannot widen them. A call for a task
 * the dispatcher does not know, for another owner's task (the same user id in another team
 * included), or for a task that already ended is refused with a structured error; the call's own
 * `allow` can only narrow the task's.
 */
export class TaskAuthority {
  private readonly known = new Map<string, TaskFacts>();

  constructor(private readonly o: TaskAuthorityOptions) {}

  /** The request as the toolbus may run it, with owner, roles and allow-list from the task record. */
  async authorize(req: ToolCallRequest): Promise<ToolCallRequest> {
    const task = await this.facts(req.task_id);
    // A user id names a user only inside its team: the same id in another team is another user.
    if (!sameOwner(task.owner, ownerOf(req))) {
      throw new ReplyError(wireError('forbidden', `task ${req.task_id} is not a task of user ${req.user_id}`, { task_id: req.task_id }));
    }
    if (isTerminalStatus(task.status)) {
      throw new ReplyError(
        wireError('task_ended', `task ${req.task_id} has already ended (${task.status}); its tools cannot be called any more`, {
          task_id: req.task_id,
          status: task.status,
        }),
      );
    }
    const allow = narrowed(task.allow, req.allow);
    const { allow: _sent, team: _team, ...rest } = req;
    return { ...rest, ...ownerFields(task.owner), roles: [...task.roles], ...(allow ? { allow: [...allow] } : {}) };
  }

  private async facts(taskId: string): Promise<TaskFacts> {
    const cached = this.known.get(taskId);
    if (cached && (isTerminalStatus(cached.status) || Date.now() - cached.at < this.o.cacheMs)) return cached;
    let view: TaskView;
    try {
      view = await request(this.o.bus, contracts.taskGet, { task_id: taskId }, { timeoutMs: this.o.timeoutMs ?? 5000 });
    } catch (err) {
      if (err instanceof RemoteError && err.wire.code === 'not_found') {
        throw new ReplyError(wireError('not_found', `there is no task ${taskId}: tools are called only for tasks the dispatcher knows`, { task_id: taskId }));
      }
      // The dispatcher is away: the caller may retry; nothing runs unchecked meanwhile.
      throw new ReplyError(wireError('unavailable', `cannot check task ${taskId} with the dispatcher: ${(err as Error).message}`, { task_id: taskId }));
    }
    const facts: TaskFacts = { owner: ownerOf(view), roles: view.roles ?? [], allow: view.options?.tools, status: view.status, at: Date.now() };
    this.known.delete(taskId);
    this.known.set(taskId, facts);
    if (this.known.size > MAX_REMEMBERED) this.known.delete(this.known.keys().next().value!);
    return facts;
  }
}

/** The tools both lists allow (a subtask's list narrows its task's); undefined when neither limits them. */
function narrowed(task: readonly string[] | undefined, call: readonly string[] | undefined): readonly string[] | undefined {
  if (!task) return call;
  if (!call) return task;
  return call.filter((t) => task.includes(t));
}
