import { api, guarded, polled, problemText } from './api.js';
import { h, show, statusTag } from './dom.js';
import type { Stop } from './views.js';

interface McpServer {
  name: string;
  transport: string;
  state: string;
  health: string;
  tools: string[];
  changed_tools: { tool: string; detected_at: string; held: boolean }[];
  restarts: number;
  last_error?: string;
  last_health_at?: string;
}
interface McpStatus {
  toolbus_id: string;
  problems: { server?: string; message: string }[];
  servers: McpServer[];
}

/**
 * The MCP servers of the answering toolbus replica with state and health, and their tools whose
 * description or schema changed since pinned: a held one is hidden from models until an admin
 * approves the change here. Read again every 2 s while shown.
 */
export function mcpView(app: HTMLElement): Stop {
  const error = h('p', { class: 'error' });
  const list = h('div', { id: 'mcp-servers' });
  const problems = h('div', { id: 'mcp-problems' });
  show(app, h('h1', {}, 'MCP servers'), error, list, problems);
  const approve = (server: string, tool: string) =>
    api('POST', `/v1/mcp/servers/${encodeURIComponent(server)}/approve-change?tool=${encodeURIComponent(tool)}`).then(load, (err: unknown) =>
      show(error, problemText(err)),
    );
  const card = (s: McpServer) =>
    h(
      'div',
      { class: 'card mcp-server', 'data-server': s.name },
      h('strong', {}, s.name),
      ` (${s.transport}) `,
      statusTag(s.state),
      ' · health ',
      statusTag(s.health),
      ` · restarts ${s.restarts}`,
      s.last_error ? h('p', { class: 'error' }, s.last_error) : null,
      h('p', {}, 'tools: ', s.tools.join(', ') || 'none'),
      ...s.changed_tools.map((c) =>
        h(
          'p',
          { class: 'changed-tool', 'data-tool': c.tool },
          `${c.tool}: description changed ${new Date(c.detected_at).toLocaleString()}`,
          c.held ? ' · held from models ' : ' ',
          h('button', { type: 'button', class: 'approve-change', onclick: () => void approve(s.name, c.tool) }, 'Approve change'),
        ),
      ),
    );
  const load = guarded(error, async () => {
    const status = await api<McpStatus>('GET', '/v1/mcp/servers');
    show(list, ...(status.servers.length ? status.servers.map(card) : [h('p', {}, `No MCP servers on toolbus ${status.toolbus_id}.`)]));
    show(problems, ...status.problems.map((p) => h('p', { class: 'error' }, `${p.server ?? 'config'}: ${p.message}`)));
  });
  return polled(load);
}
