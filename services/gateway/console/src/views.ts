import { api, ApiProblem, apiKey, follow, guarded, polled, problemText } from './api.js';
import { h, show, statusTag, truncated } from './dom.js';

// Shapes of the API answers this page reads (the OpenAPI document has them in full).
interface TaskSummary {
  task_id: string;
  user_id: string;
  goal: string;
  status: string;
  created_at: string;
  updated_at: string;
}
interface WireError {
  code: string;
  message: string;
}
interface TaskView extends TaskSummary {
  result?: { output?: string } & Record<string, unknown>;
  error?: WireError;
  trace_context?: { trace_id: string };
  usage: { input_tokens: number; output_tokens: number };
}
interface Subtask {
  id: string;
  intent: string;
  depends_on: string[];
  status: string;
  attempts: number;
  generation: number;
  error?: WireError;
  replaced?: boolean;
}
interface PlanView {
  plan: { subtasks: Subtask[]; origin?: string; replans?: number } | null;
}
interface Approval {
  call_id: string;
  task_id: string;
  subtask_id: string;
  step: number;
  user_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  requested_at: string;
  expires_at: string;
}
interface AuditRecord {
  time: string;
  tool: string;
  provider?: string;
  arguments: string;
  outcome: string;
  error_code?: string;
  result_summary?: string;
  duration_ms: number;
  replayed: boolean;
  cached: boolean;
  decided_by?: string;
}
interface ConsoleConfig {
  traceUrlTemplate: string | null;
}

/** What a view gives back so the router can stop its live updates when the page changes. */
export type Stop = () => void;

export function loginView(app: HTMLElement, done: () => void): Stop {
  const input = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', placeholder: 'API key', required: true }) as HTMLInputElement;
  const error = h('p', { class: 'error', id: 'login-error' });
  const form = h('form', { id: 'login', onsubmit: (e) => void submit(e) }, h('h1', {}, 'Log in'), input, h('button', { type: 'submit' }, 'Log in'), error);
  async function submit(e: Event) {
    e.preventDefault();
    apiKey.set(input.value.trim());
    try {
      await api('GET', '/v1/tasks?limit=1');
      done();
    } catch (err) {
      apiKey.clear();
      show(error, err instanceof ApiProblem && err.status === 401 ? 'That key is not valid.' : problemText(err));
    }
  }
  show(app, form);
  return () => undefined;
}

/** The time filter's choices: tasks created within the last ... (0: any time). */
const TIME_WINDOWS: [string, number][] = [
  ['any time', 0],
  ['last hour', 3_600_000],
  ['last 24 hours', 86_400_000],
  ['last 7 days', 7 * 86_400_000],
];

export function tasksView(app: HTMLElement): Stop {
  const status = h(
    'select',
    { id: 'status-filter' },
    ...['', 'accepted', 'planning', 'running', 'waiting', 'completed', 'failed', 'cancelled'].map((s) => h('option', { value: s }, s || 'any status')),
  ) as HTMLSelectElement;
  const since = h('select', { id: 'since-filter' }, ...TIME_WINDOWS.map(([label, ms]) => h('option', { value: String(ms) }, label))) as HTMLSelectElement;
  const everyone = h('input', { type: 'checkbox', id: 'all-users' }) as HTMLInputElement;
  const user = h('input', { id: 'user-filter', placeholder: 'user' }) as HTMLInputElement;
  const rows = h('tbody', { id: 'task-rows' });
  const error = h('p', { class: 'error' });
  show(
    app,
    h('h1', {}, 'Tasks'),
    h('p', {}, status, ' ', since, ' ', h('label', {}, everyone, " every user's (admin)"), ' ', user),
    error,
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', {}, 'task'), h('th', {}, 'user'), h('th', {}, 'goal'), h('th', {}, 'status'), h('th', {}, 'updated'))),
      rows,
    ),
  );
  const load = guarded(error, async () => {
    const q = new URLSearchParams({ limit: '50' });
    if (status.value) q.set('status', status.value);
    if (everyone.checked) q.set('all', 'true');
    // The API filters by user (admins: anyone of the team), status and time, before paging.
    if (user.value.trim()) q.set('user', user.value.trim());
    if (Number(since.value)) q.set('since', new Date(Date.now() - Number(since.value)).toISOString());
    const { tasks } = await api<{ tasks: TaskSummary[] }>('GET', `/v1/tasks?${q}`);
    show(
      rows,
      ...tasks.map((t) =>
        h(
          'tr',
          { 'data-task': t.task_id },
          h('td', {}, h('a', { href: `#/tasks/${t.task_id}` }, t.task_id)),
          h('td', {}, t.user_id),
          h('td', {}, t.goal.slice(0, 120)),
          h('td', {}, statusTag(t.status)),
          h('td', {}, new Date(t.updated_at).toLocaleTimeString()),
        ),
      ),
    );
  });
  for (const el of [status, since, everyone, user]) el.addEventListener('change', () => void load());
  // The list has no change stream of its own: it is read again every 2 s while shown.
  return polled(load);
}

/** The plan as layers: each subtask sits one column right of the deepest subtask it depends on. */
function dag(subtasks: Subtask[]): HTMLElement {
  const depth = new Map<string, number>();
  const byId = new Map(subtasks.map((s) => [s.id, s]));
  const depthOf = (s: Subtask, seen = new Set<string>()): number => {
    if (depth.has(s.id)) return depth.get(s.id)!;
    if (seen.has(s.id)) return 0;
    seen.add(s.id);
    const d = Math.max(-1, ...s.depends_on.map((id) => (byId.has(id) ? depthOf(byId.get(id)!, seen) : -1))) + 1;
    depth.set(s.id, d);
    return d;
  };
  const layers: Subtask[][] = [];
  for (const s of subtasks) (layers[depthOf(s)] ??= []).push(s);
  return h(
    'div',
    { class: 'dag', id: 'plan' },
    ...layers.map((layer) =>
      h(
        'div',
        { class: 'layer' },
        ...layer.map((s) =>
          h(
            'div',
            { class: 'node', 'data-subtask': s.id },
            h('strong', {}, s.id),
            ' ',
            statusTag(s.status),
            h('div', {}, s.intent.slice(0, 160)),
            h(
              'small',
              {},
              `attempts ${s.attempts}`,
              s.generation > 0 ? ` · re-plan ${s.generation}` : '',
              s.depends_on.length ? ` · after ${s.depends_on.join(', ')}` : '',
              s.replaced ? ' · replaced' : '',
            ),
            s.error ? h('div', { class: 'error' }, `${s.error.code}: ${s.error.message}`) : null,
          ),
        ),
      ),
    ),
  );
}

/** One timeline line for a task event: LLM calls with tokens and latency, tool calls with arguments and results. */
function timelineItem(event: string, data: Record<string, unknown>): HTMLElement | null {
  const d = (data.data ?? {}) as Record<string, unknown>;
  if (event === 'step') {
    if (d.kind === 'token_delta') return null;
    const detail = (d.detail ?? {}) as Record<string, unknown>;
    const usage = d.usage as { input_tokens: number; output_tokens: number } | undefined;
    const head =
      `${d.subtask_id}#${d.step} ${d.kind}` +
      (detail.tool ? ` ${detail.tool}` : '') +
      (usage ? ` · ${usage.input_tokens}+${usage.output_tokens} tokens` : '') +
      (detail.latency_ms !== undefined ? ` · ${detail.latency_ms} ms` : '');
    const body = detail.arguments ?? detail.result ?? detail.error;
    return h('li', { 'data-kind': String(d.kind) }, head, body === undefined ? null : truncated(typeof body === 'string' ? body : JSON.stringify(body)));
  }
  return h('li', { 'data-kind': event }, event, d.error ? ` · ${(d.error as WireError).code}: ${(d.error as WireError).message}` : '');
}

/** The task's tool calls as the toolbus audited them: one row per attempt. */
function auditTable(records: AuditRecord[]): HTMLElement {
  const columns = ['time', 'tool', 'outcome', 'duration', 'decided by', 'arguments', 'result'];
  return h(
    'table',
    {},
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', {}, c)))),
    h(
      'tbody',
      {},
      ...records.map((r) =>
        h(
          'tr',
          { 'data-tool': r.tool, 'data-outcome': r.outcome },
          h('td', {}, new Date(r.time).toLocaleTimeString()),
          h('td', {}, r.tool, r.provider ? ` (${r.provider})` : ''),
          h('td', {}, statusTag(r.outcome), r.error_code ? ` ${r.error_code}` : '', r.replayed ? ' · replayed' : '', r.cached ? ' · cached' : ''),
          h('td', {}, `${Math.round(r.duration_ms)} ms`),
          h('td', {}, r.decided_by ?? ''),
          h('td', {}, truncated(r.arguments, 200)),
          h('td', {}, r.result_summary ? truncated(r.result_summary, 200) : ''),
        ),
      ),
    ),
  );
}

export function taskView(app: HTMLElement, taskId: string, config: ConsoleConfig): Stop {
  const abort = new AbortController();
  const head = h('div', { id: 'task-head' });
  const plan = h('div', {});
  const outcome = h('div', { id: 'outcome' });
  const timeline = h('ol', { class: 'timeline', id: 'timeline' });
  const audit = h('div', { id: 'audit' });
  const error = h('p', { class: 'error' });
  show(
    app,
    h('h1', {}, `Task ${taskId}`),
    error,
    head,
    h('h2', {}, 'Plan'),
    plan,
    h('h2', {}, 'Outcome'),
    outcome,
    h('h2', {}, 'Timeline'),
    timeline,
    h('h2', {}, 'Tool audit'),
    audit,
  );
  const render = async () => {
    try {
      const [view, planView] = await Promise.all([api<TaskView>('GET', `/v1/tasks/${taskId}`), api<PlanView>('GET', `/v1/tasks/${taskId}/plan`)]);
      const traceId = view.trace_context?.trace_id;
      const traceUrl = traceId && config.traceUrlTemplate ? config.traceUrlTemplate.replace('{trace_id}', traceId) : undefined;
      const ended = ['completed', 'failed', 'cancelled'].includes(view.status);
      show(
        head,
        h('p', {}, statusTag(view.status), ` · ${view.user_id} · ${view.usage.input_tokens}+${view.usage.output_tokens} tokens`),
        h('p', {}, view.goal),
        traceId ? h('p', {}, 'trace ', traceUrl ? h('a', { href: traceUrl, id: 'trace-link', target: '_blank', rel: 'noopener' }, traceId) : traceId) : null,
        ended
          ? null
          : h(
              'button',
              {
                id: 'cancel',
                type: 'button',
                onclick: () =>
                  void api('DELETE', `/v1/tasks/${taskId}?reason=${encodeURIComponent('cancelled from the console')}`).then(render, (err: unknown) =>
                    show(error, problemText(err)),
                  ),
              },
              'Cancel',
            ),
      );
      show(plan, planView.plan ? dag(planView.plan.subtasks) : 'not planned yet');
      show(
        outcome,
        view.result
          ? h('div', { id: 'result' }, truncated(typeof view.result.output === 'string' ? view.result.output : JSON.stringify(view.result), 2000))
          : view.error
            ? h('p', { class: 'error', id: 'task-error' }, `${view.error.code}: ${view.error.message}`)
            : '…',
      );
    } catch (err) {
      show(error, problemText(err));
    }
    // The audit is read apart: without a toolbus (503) the rest of the page still shows.
    await api<{ records: AuditRecord[] }>('GET', `/v1/tasks/${taskId}/audit`).then(
      ({ records }) => show(audit, records.length ? auditTable(records) : 'no tool calls'),
      (err: unknown) => show(audit, h('span', { class: 'error' }, problemText(err))),
    );
  };
  let pending: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(() => void render(), 150);
  };
  void render();
  follow(`/v1/tasks/${taskId}/events`, abort.signal, (event, data) => {
    const item = timelineItem(event, data as Record<string, unknown>);
    if (item) timeline.append(item);
    if (event !== 'step' || (data as { data?: { kind?: string } }).data?.kind !== 'token_delta') soon();
  }).then(soon, (err: unknown) => {
    if (!abort.signal.aborted) show(error, problemText(err));
  });
  return () => {
    abort.abort();
    clearTimeout(pending);
  };
}

/** Who the viewer is, as GET /v1/me answers. */
export interface Me {
  user_id: string;
  team: string;
  is_admin: boolean;
  approves: boolean;
  approves_team: boolean;
}

/** What the inbox lists: the approvals the viewer may decide, said in words. */
function approvalScope(me: Me | undefined): string {
  if (!me) return '';
  if (me.approves_team) return `You decide the approvals of every user of team ${me.team}.`;
  if (me.approves) return 'You decide the approvals of your own tasks.';
  return 'Approvals are decided by approvers; your key holds no approver role, so none are yours to decide.';
}

export function approvalsView(app: HTMLElement, onCount: (n: number) => void, me?: Me): Stop {
  const abort = new AbortController();
  const list = h('div', { id: 'approvals' });
  const error = h('p', { class: 'error' });
  show(app, h('h1', {}, 'Approvals'), h('p', { id: 'approval-scope' }, approvalScope(me)), error, list);
  const card = (a: Approval) => {
    const reason = h('input', { placeholder: 'reason (optional)', class: 'reason' }) as HTMLInputElement;
    const decide = (decision: 'approve' | 'deny') =>
      api('POST', `/v1/tasks/${a.task_id}/approvals/${encodeURIComponent(a.call_id)}`, { decision, ...(reason.value ? { reason: reason.value } : {}) }).catch(
        (err: unknown) => show(error, problemText(err)),
      );
    return h(
      'div',
      { class: 'card approval', 'data-call': a.call_id, 'data-task': a.task_id },
      h('strong', {}, a.tool),
      ` for ${a.user_id} · task `,
      h('a', { href: `#/tasks/${a.task_id}` }, a.task_id),
      ` · ${a.subtask_id}#${a.step}`,
      truncated(JSON.stringify(a.arguments, null, 2), 1000),
      h('small', {}, `until ${new Date(a.expires_at).toLocaleString()}`),
      h(
        'p',
        {},
        reason,
        ' ',
        h('button', { type: 'button', class: 'approve', onclick: () => void decide('approve') }, 'Approve'),
        ' ',
        h('button', { type: 'button', class: 'deny', onclick: () => void decide('deny') }, 'Deny'),
      ),
    );
  };
  follow('/v1/approvals/events', abort.signal, (event, data) => {
    if (event !== 'approvals') return;
    const { approvals } = data as { approvals: Approval[] };
    onCount(approvals.length);
    show(list, ...(approvals.length ? approvals.map(card) : [h('p', { id: 'no-approvals' }, 'Nothing waits for a decision.')]));
  }).catch((err: unknown) => {
    if (!abort.signal.aborted) show(error, problemText(err));
  });
  return () => abort.abort();
}

/** A table of what a GET answers, read again every 2 s while shown. */
export function tableView(app: HTMLElement, title: string, path: string, rowsOf: (body: never) => Record<string, unknown>[]): Stop {
  const error = h('p', { class: 'error' });
  const table = h('table', { id: 'table' });
  show(app, h('h1', {}, title), error, table);
  const load = guarded(error, async () => {
    const rows = rowsOf((await api('GET', path)) as never);
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    show(
      table,
      h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', {}, c)))),
      h(
        'tbody',
        {},
        ...rows.map((r) =>
          h(
            'tr',
            {},
            ...columns.map((c) => h('td', {}, typeof r[c] === 'object' && r[c] !== null ? truncated(JSON.stringify(r[c]), 200) : String(r[c] ?? ''))),
          ),
        ),
      ),
    );
    if (rows.length === 0) show(table, h('tr', {}, h('td', {}, 'none')));
  });
  return polled(load);
}

interface SessionRow {
  session_id: string;
  message_count: number;
  tokens: number;
  updated_at: string;
  locked: boolean;
}
interface Message {
  role: string;
  content: string | null;
  created_at?: string;
}

/** The sessions of the viewer's own user (an admin may name any user of the team), and a session's messages. */
export function sessionsView(app: HTMLElement, me: { user_id: string; is_admin: boolean }): Stop {
  const user = h('input', { id: 'session-user', value: me.user_id, readonly: !me.is_admin }) as HTMLInputElement;
  const rows = h('tbody', { id: 'session-rows' });
  const messages = h('div', { id: 'messages' });
  const error = h('p', { class: 'error' });
  show(
    app,
    h('h1', {}, 'Sessions'),
    h('p', {}, 'user ', user),
    error,
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'session'), h('th', {}, 'messages'), h('th', {}, 'tokens'), h('th', {}, 'updated'))), rows),
    messages,
  );
  const open = async (sessionId: string) => {
    try {
      const body = await api<{ messages: Message[] }>('GET', `/v1/users/${encodeURIComponent(user.value)}/sessions/${encodeURIComponent(sessionId)}?limit=200`);
      show(
        messages,
        h('h2', {}, sessionId),
        ...body.messages.map((m) => h('div', { class: 'card message', 'data-role': m.role }, h('strong', {}, m.role), truncated(m.content ?? '', 1000))),
      );
    } catch (err) {
      show(error, problemText(err));
    }
  };
  const load = guarded(error, async () => {
    const { sessions } = await api<{ sessions: SessionRow[] }>('GET', `/v1/users/${encodeURIComponent(user.value)}/sessions?limit=50`);
    show(
      rows,
      ...sessions.map((s) =>
        h(
          'tr',
          { 'data-session': s.session_id },
          h(
            'td',
            {},
            h(
              'a',
              {
                href: '#/sessions',
                onclick: (e) => {
                  e.preventDefault();
                  void open(s.session_id);
                },
              },
              s.session_id,
            ),
          ),
          h('td', {}, s.message_count),
          h('td', {}, s.tokens),
          h('td', {}, new Date(s.updated_at).toLocaleString()),
        ),
      ),
    );
  });
  user.addEventListener('change', () => void load());
  void load();
  return () => undefined;
}
