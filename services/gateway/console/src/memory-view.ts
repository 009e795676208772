import { api, guarded, problemText } from './api.js';
import { h, show, statusTag, truncated } from './dom.js';
import type { Stop } from './views.js';

interface Memory {
  memory_id: string;
  type: string;
  content: string;
  confidence: number;
  status: string;
  created_at: string;
  provenance?: { kind: string; tools?: string[]; task_id?: string; session_id?: string; approved_by?: string };
}

/** Where a memory came from, as `hermes memory list` labels it (the page cannot import the contracts). */
function provenance(m: Memory): string {
  const p = m.provenance;
  if (!p) return 'unknown';
  const label = p.kind === 'tool_result' ? `tool_result:${(p.tools ?? []).join(',')}` : p.kind;
  return [label, p.task_id ? `task ${p.task_id}` : '', p.session_id ? `session ${p.session_id}` : '', p.approved_by ? `approved by ${p.approved_by}` : '']
    .filter(Boolean)
    .join(' · ');
}

/**
 * The long-term memories of the viewer's own user (an admin may name any user of the team), with
 * their provenance; forgetting one memory, or the user: every memory and every session, after a second click.
 */
export function memoryView(app: HTMLElement, me: { user_id: string; is_admin: boolean }): Stop {
  const user = h('input', { id: 'memory-user', value: me.user_id, readonly: !me.is_admin }) as HTMLInputElement;
  const list = h('div', { id: 'memories' });
  const error = h('p', { class: 'error' });
  const outcome = h('p', { id: 'forget-outcome' });
  const confirm = h('button', { type: 'button', id: 'forget-confirm', hidden: true, onclick: () => void forget() }, 'Really forget everything');
  const ask = h(
    'button',
    {
      type: 'button',
      id: 'forget',
      onclick: () => {
        confirm.hidden = false;
      },
    },
    'Forget this user…',
  );
  show(app, h('h1', {}, 'Memory'), h('p', {}, 'user ', user, ' ', ask, ' ', confirm), outcome, error, list);
  const path = () => `/v1/users/${encodeURIComponent(user.value.trim())}/memory`;
  async function forget(): Promise<void> {
    confirm.hidden = true;
    try {
      const r = await api<{ memories_removed: number; sessions_removed: number }>('DELETE', path());
      show(outcome, `Forgot ${r.memories_removed} memories and ${r.sessions_removed} sessions.`);
      await load();
    } catch (err) {
      show(error, problemText(err));
    }
  }
  async function forgetOne(memoryId: string): Promise<void> {
    try {
      await api<{ memory_id: string }>('DELETE', `${path()}/${encodeURIComponent(memoryId)}`);
      show(outcome, `Forgot memory ${memoryId}.`);
      await load();
    } catch (err) {
      show(error, problemText(err));
    }
  }
  const load = guarded(error, async () => {
    const { memories } = await api<{ memories: Memory[] }>('GET', `${path()}?limit=200`);
    show(
      list,
      ...(memories.length
        ? memories.map((m) =>
            h(
              'div',
              { class: 'card memory', 'data-memory': m.memory_id },
              h('strong', {}, m.type),
              ' ',
              statusTag(m.status),
              ` · confidence ${m.confidence} · ${new Date(m.created_at).toLocaleString()}`,
              truncated(m.content, 500),
              h('small', { class: 'provenance' }, `from ${provenance(m)}`),
              h('button', { type: 'button', class: 'forget-memory', onclick: () => void forgetOne(m.memory_id) }, 'Forget'),
            ),
          )
        : [h('p', { id: 'no-memories' }, 'No memories.')]),
    );
  });
  user.addEventListener('change', () => void load());
  void load();
  return () => undefined;
}
