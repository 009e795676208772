import {
  taskEventKind,
  type TaskEvent,
  type TaskEventDataByKind,
  type TaskEventKind,
  type SubtaskStatus,
  type TaskView,
  type TokenUsage,
} from '@hermes/contracts';

/** One readable line per task event, for `hermes run` without `--json`. */
export function formatTaskEvent(event: TaskEvent): string {
  // The event union does not narrow on `type`, so each branch reads its data through the kind.
  const kind = taskEventKind(event);
  switch (kind) {
    case 'accepted': {
      const d = dataOf(event, kind);
      return `accepted session=${d.session_id}${d.trace_id ? ` trace=${d.trace_id}` : ''}`;
    }
    case 'planned': {
      const d = dataOf(event, kind);
      const what = d.replans ? `re-plan ${d.replans}` : 'planned';
      return `${what}: ${d.subtasks.length} subtask(s) ${d.subtasks.map((s) => (s.depends_on.length ? `${s.id}<-${s.depends_on.join('+')}` : s.id)).join(' ')}`;
    }
    case 'rejected': {
      const d = dataOf(event, kind);
      const issues = d.issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ');
      return `rejected: ${d.error.code}: ${d.error.message}${issues ? ` (${issues})` : ''}`;
    }
    case 'started': {
      const d = dataOf(event, kind);
      return `started subtask=${d.subtask_id} attempt=${d.attempt}`;
    }
    case 'step': {
      const d = dataOf(event, kind);
      const parts = ['step', d.kind];
      const tool = d.detail?.tool ?? d.detail?.name;
      if (typeof tool === 'string') parts.push(`tool=${tool}`);
      if (d.model) parts.push(`model=${d.model}`);
      if (d.usage) parts.push(`tokens=${formatUsage(d.usage)}`);
      parts.push(`subtask=${d.subtask_id}#${d.step}`);
      return parts.join(' ');
    }
    case 'input_required': {
      const d = dataOf(event, kind);
      return `input required subtask=${d.subtask_id}: ${questionText(d.task_id, d)}`;
    }
    case 'review_started': {
      const d = dataOf(event, kind);
      return `review ${d.round}: ${d.subtasks.join(' ')}`;
    }
    case 'review_verdict': {
      const d = dataOf(event, kind);
      const sent = (d.subtasks ?? []).map((s) => `${s.id} (${s.notes})`).join(', ');
      return `review ${d.round}: ${d.verdict}${sent ? ` ${sent}` : ''}${d.exhausted ? ' (no round left: the last outputs are composed)' : ''}`;
    }
    case 'completed':
      return `completed: ${dataOf(event, kind).result.output}`;
    case 'failed': {
      const { error } = dataOf(event, kind);
      return `failed: ${error.code}: ${error.message}`;
    }
    case 'cancelled': {
      const { reason } = dataOf(event, kind);
      return `cancelled${reason ? `: ${reason}` : ''}`;
    }
    default:
      return `${String(kind)} ${JSON.stringify(event.data)}`;
  }
}

function dataOf<K extends TaskEventKind>(event: TaskEvent, _kind: K): TaskEventDataByKind[K] {
  return event.data as TaskEventDataByKind[K];
}

/** A TaskView as aligned `label  value` lines, for `hermes status` without `--json`. */
export function formatTaskView(view: TaskView): string {
  const rows: [string, string][] = [
    ['task', view.task_id],
    ['status', view.status],
    ['user', view.user_id],
    ['session', view.session_id],
    ['goal', view.goal],
    ['created', view.created_at],
    ['updated', view.updated_at],
    ['attempts', String(view.attempts)],
    ['tokens', formatUsage(view.usage)],
  ];
  if (view.trace_context) rows.push(['trace', view.trace_context.trace_id]);
  if (view.result) rows.push(['result', view.result.output]);
  if (view.error) rows.push(['error', `${view.error.code}: ${view.error.message}`]);
  // A waiting task says what it waits for, as its input_required event did.
  for (const s of view.plan?.subtasks ?? [])
    if (s.status === 'input_required' && s.input && s.input.answer === undefined) rows.push(['question', `${s.id}: ${questionText(view.task_id, s.input)}`]);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const text = rows.map(([label, value]) => `${label.padEnd(width)}${value}`).join('\n');
  return view.plan ? `${text}\n${formatPlan(view.plan)}` : text;
}

const MARK: Record<SubtaskStatus, string> = { pending: '·', running: '▶', input_required: '?', succeeded: '✓', failed: '✗', skipped: '–' };

/** A question of ask_user with its choices and the command that answers it. */
function questionText(taskId: string, q: { question: string; choices?: string[] }): string {
  const choices = q.choices?.length ? ` [${q.choices.join(' | ')}]` : '';
  return `${q.question}${choices} (answer with: hermes answer ${taskId} "<text>")`;
}

/** The plan as a DAG, one node per line in dependency order: state, id, what it waits for, intent. */
export function formatPlan(plan: NonNullable<TaskView['plan']>): string {
  const lines = [`plan (${plan.stage}${plan.replans ? `, ${plan.replans} re-plan(s)` : ''})`];
  const depth = new Map<string, number>();
  const levelOf = (id: string, seen: string[] = []): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    const node = plan.subtasks.find((s) => s.id === id);
    const level = !node || seen.includes(id) ? 0 : Math.max(-1, ...node.depends_on.map((d) => levelOf(d, [...seen, id]))) + 1;
    depth.set(id, level);
    return level;
  };
  const ordered = [...plan.subtasks].sort((a, b) => levelOf(a.id) - levelOf(b.id));
  for (const s of ordered) {
    const after = s.depends_on.length ? ` ← ${s.depends_on.join(', ')}` : '';
    const tries = s.attempts > 1 ? ` (${s.attempts} attempts)` : '';
    const why = s.error && s.status !== 'succeeded' ? ` [${s.error.code}]` : '';
    lines.push(`  ${'  '.repeat(levelOf(s.id))}${MARK[s.status]} ${s.id} ${s.status}${tries}${why}${after}: ${s.intent}`);
  }
  if (plan.job)
    lines.push(
      `  waiting for ${plan.job.kind === 'compose' ? 'the compose job' : plan.job.purpose === 'replan' ? 'a re-plan' : 'the planner'} (${plan.job.job_id})`,
    );
  return lines.join('\n');
}

/** Input and output tokens as `in+out`. */
function formatUsage(usage: TokenUsage): string {
  return `${usage.input_tokens}+${usage.output_tokens}`;
}
