import { api, apiKey } from './api.js';
import { mcpView } from './mcp-view.js';
import { memoryView } from './memory-view.js';
import { approvalsView, loginView, sessionsView, tableView, taskView, tasksView, type Me, type Stop } from './views.js';

// The console: hash routes over the gateway's API, with the key from the login page in sessionStorage.
const app = document.getElementById('app')!;
const nav = document.getElementById('nav')!;
const count = document.getElementById('approval-count')!;
let stop: Stop = () => undefined;
const config = await fetch('/console/config.json')
  .then((r) => r.json() as Promise<{ traceUrlTemplate: string | null }>)
  .catch(() => ({ traceUrlTemplate: null }));

const who = document.getElementById('who')!;
let me: Me | undefined;

let routing = 0;

/** A tool as GET /v1/tools lists it. */
interface ToolRow {
  name: string;
  description: string;
  idempotent?: boolean;
  origin?: { kind: string; name?: string };
  requires_approval?: boolean;
}

async function route(): Promise<void> {
  const turn = ++routing;
  stop();
  stop = () => undefined;
  if (!apiKey.get()) {
    nav.hidden = true;
    stop = loginView(app, () => {
      location.hash = '#/tasks';
      void route();
    });
    return;
  }
  nav.hidden = false;
  me ??= await api<Me>('GET', '/v1/me').catch(() => undefined);
  // Another route began while /v1/me was asked: that one shows its page.
  if (turn !== routing) return;
  who.textContent = me ? `${me.team}/${me.user_id}${me.is_admin ? ' (admin)' : ''}` : '';
  const [, page, id] = location.hash.split('/');
  if (page === 'tasks' && id) stop = taskView(app, decodeURIComponent(id), config);
  else if (page === 'approvals') stop = approvalsView(app, (n) => (count.textContent = n ? String(n) : ''), me);
  else if (page === 'sessions' && me) stop = sessionsView(app, me);
  else if (page === 'tools')
    stop = tableView(app, 'Tools', '/v1/tools', (b: { tools: ToolRow[] }) =>
      b.tools.map(({ name, description, idempotent, origin, requires_approval }) => ({
        name,
        runs: origin ? `${origin.kind}${origin.name ? ` ${origin.name}` : ''}` : '',
        approval: requires_approval ? 'required' : '',
        idempotent: idempotent ?? false,
        description,
      })),
    );
  else if (page === 'memory' && me) stop = memoryView(app, me);
  else if (page === 'mcp') stop = mcpView(app);
  else if (page === 'pools') stop = tableView(app, 'LLM pools', '/v1/llm/pools', (b: { pools: Record<string, unknown>[] }) => b.pools);
  else stop = tasksView(app);
}

document.getElementById('logout')!.addEventListener('click', () => {
  apiKey.clear();
  me = undefined;
  location.hash = '';
  void route();
});
window.addEventListener('hashchange', () => void route());
// Keeps the approvals badge current on every page, from the list the API answers.
setInterval(() => {
  if (apiKey.get())
    api<{ approvals: unknown[] }>('GET', '/v1/approvals').then(
      (b) => (count.textContent = b.approvals.length ? String(b.approvals.length) : ''),
      () => undefined,
    );
}, 5000);
void route();
