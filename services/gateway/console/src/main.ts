import { api, apiKey } from './api.js';
import { approvalsView, loginView, tableView, taskView, tasksView, type Stop } from './views.js';

// The console: hash routes over the gateway's API, with the key from the login page in sessionStorage.
const app = document.getElementById('app')!;
const nav = document.getElementById('nav')!;
const count = document.getElementById('approval-count')!;
let stop: Stop = () => undefined;
const config = await fetch('/console/config.json').then((r) => r.json() as Promise<{ traceUrlTemplate: string | null }>).catch(() => ({ traceUrlTemplate: null }));

function route(): void {
  stop();
  if (!apiKey.get()) {
    nav.hidden = true;
    stop = loginView(app, () => {
      location.hash = '#/tasks';
      route();
    });
    return;
  }
  nav.hidden = false;
  const [, page, id] = location.hash.split('/');
  if (page === 'tasks' && id) stop = taskView(app, decodeURIComponent(id), config);
  else if (page === 'approvals') stop = approvalsView(app, (n) => (count.textContent = n ? String(n) : ''));
  else if (page === 'tools') stop = tableView(app, 'Tools', '/v1/tools', (b: { tools: Record<string, unknown>[] }) => b.tools.map(({ name, description, idempotent }) => ({ name, description, idempotent: idempotent ?? false })));
  else if (page === 'mcp') stop = tableView(app, 'MCP servers', '/v1/mcp/servers', (b: { servers: Record<string, unknown>[] }) => b.servers);
  else if (page === 'pools') stop = tableView(app, 'LLM pools', '/v1/llm/pools', (b: { pools: Record<string, unknown>[] }) => b.pools);
  else stop = tasksView(app);
}

document.getElementById('logout')!.addEventListener('click', () => {
  apiKey.clear();
  location.hash = '';
  route();
});
window.addEventListener('hashchange', route);
// Keeps the approvals badge current on every page, from the list the API answers.
setInterval(() => {
  if (apiKey.get()) api<{ approvals: unknown[] }>('GET', '/v1/approvals').then((b) => (count.textContent = b.approvals.length ? String(b.approvals.length) : ''), () => undefined);
}, 5000);
route();
