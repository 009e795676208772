import { describe, expect, it } from 'vitest';
import { parseMcpConfig, redactedConfig } from '../src/mcp/mcp-config.js';
import { disambiguatedName, mcpToolName } from '../src/mcp/mcp-naming.js';
import { outcomeOfMcpResult } from '../src/mcp/mcp-results.js';

describe('MCP config', () => {
  it('names the server and field of every problem and keeps the good servers', () => {
    const c = parseMcpConfig({
      servers: {
        good: { transport: 'stdio', command: 'node', args: ['server.js'] },
        nocommand: { transport: 'stdio', args: [] },
        badurl: { transport: 'http', url: 'ftp://x' },
        typo: { transport: 'http', url: 'http://x', timeout: 5 },
        badpolicy: { transport: 'stdio', command: 'x', tools: { t: { roles: 'ops' } } },
        off: { transport: 'stdio', enabled: false },
      },
    });
    expect(c.fatal).toBe(false);
    expect(c.servers.map((s) => s.name)).toEqual(['good']);
    expect(c.problems.map((p) => [p.server, p.field])).toEqual([
      ['nocommand', 'command'],
      ['badurl', 'url'],
      ['typo', 'timeout'],
      ['badpolicy', 'tools.t.roles'],
    ]);
  });

  it('reads per-tool transforms and rules as a ToolSpec declares them, and names the field of a broken one', () => {
    const transforms = [{ op: 'trim', field: '/query' }];
    const rules = [{ name: 'short', message: 'keep it short', condition: { field: '/query', op: 'ne', value: '' } }];
    const c = parseMcpConfig({
      servers: {
        good: { transport: 'stdio', command: 'x', tools: { search: { transforms, rules } } },
        badunit: { transport: 'stdio', command: 'x', tools: { t: { transforms: [{ op: 'unit', field: '/a', unit: 'parsec' }] } } },
        badrule: { transport: 'stdio', command: 'x', tools: { t: { rules: [{ name: 'r', message: 'm', condition: { field: '/a', op: 'gt' } }] } } },
      },
    });
    expect(c.servers.find((s) => s.name === 'good')?.tools).toEqual({ search: { transforms, rules } });
    expect(c.problems.map((p) => [p.server, p.field])).toEqual([
      ['badunit', 'tools.t.transforms.0.unit'],
      ['badrule', 'tools.t.rules.0.condition'],
    ]);
  });

  it('resolves ${ENV} references, reports a missing one without its value, and hides secrets when shown', () => {
    const env = { TOKEN: 'secret-1', KEY: 'secret-2' };
    const c = parseMcpConfig(
      {
        servers: {
          web: { transport: 'http', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer ${TOKEN}' } },
          cli: { transport: 'stdio', command: 'tool', env: { API_KEY: '${KEY}' } },
          missing: { transport: 'stdio', command: 'tool', env: { API_KEY: '${NOT_SET}' } },
        },
      },
      env,
    );
    expect(c.servers).toEqual([
      expect.objectContaining({ name: 'web', headers: { authorization: 'Bearer secret-1' } }),
      expect.objectContaining({ name: 'cli', env: { API_KEY: 'secret-2' } }),
    ]);
    expect(c.problems).toEqual([
      { server: 'missing', field: 'env.API_KEY', message: 'server "missing": env.API_KEY: refers to the environment variable NOT_SET, which is not set' },
    ]);
    expect(JSON.stringify(c.servers.map(redactedConfig))).not.toMatch(/secret-/);
  });

  it('refuses credentials in a URL (user info, ?token= and the like) and says to use headers or env', () => {
    const c = parseMcpConfig({
      servers: {
        userinfo: { transport: 'http', url: 'https://svc:hunter22@mcp.example.com/mcp' },
        token: { transport: 'http', url: 'https://mcp.example.com/mcp?token=abc123xyz' },
        apikey: { transport: 'http', url: 'https://mcp.example.com/mcp?v=2&api_key=abc123xyz' },
        plain: { transport: 'http', url: 'https://mcp.example.com/mcp?version=2' },
      },
    });
    expect(c.servers.map((s) => s.name)).toEqual(['plain']);
    expect(c.problems.map((p) => [p.server, p.field])).toEqual([
      ['userinfo', 'url'],
      ['token', 'url'],
      ['apikey', 'url'],
    ]);
    for (const p of c.problems) expect(p.message).toMatch(/carries a credential in .*send it as a header instead \(headers: .*or through env/);
    expect(c.problems[1]?.message).toContain('the query parameter "token"');
    // The refusal names the field, never the value.
    expect(JSON.stringify(c.problems)).not.toMatch(/hunter22|abc123xyz/);
  });

  it('treats header values, their words, and env values from ${VAR} or with a secret name as secrets', () => {
    const c = parseMcpConfig(
      {
        servers: {
          web: { transport: 'http', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer tok-literal-1', 'x-team': 'blue' } },
          cli: { transport: 'stdio', command: 'tool', args: ['--key', '${FROM_ENV}'], env: { API_TOKEN: 'literal-env-2', LOG_LEVEL: 'debug' } },
        },
      },
      { FROM_ENV: 'from-env-3' },
    );
    expect(c.servers[0]?.secrets).toEqual(['Bearer tok-literal-1', 'tok-literal-1']);
    expect(c.servers[1]?.secrets.sort()).toEqual(['from-env-3', 'literal-env-2']);
    expect(redactedConfig(c.servers[1]!)).toMatchObject({ args: ['--key', '***'] });
    expect(redactedConfig(c.servers[1]!)).not.toHaveProperty('secrets');
  });

  it('refuses a document that is not a servers map as a whole', () => {
    expect(parseMcpConfig([1, 2])).toMatchObject({ fatal: true, servers: [] });
    expect(parseMcpConfig({ servers: [] })).toMatchObject({ fatal: true, problems: [{ field: 'servers' }] });
    expect(parseMcpConfig({ servers: { 'bad name!': { transport: 'stdio', command: 'x' } } }).problems[0]).toMatchObject({ field: 'name' });
  });
});

describe('MCP tool names', () => {
  it('prefixes with the server and keeps only characters every LLM provider accepts', () => {
    expect(mcpToolName('calendar', 'create_event')).toBe('calendar_create_event');
    expect(mcpToolName('fs', 'read.file/v2')).toBe('fs_read_file_v2');
  });

  it('cuts long names to 64 characters with a hash suffix that keeps them apart', () => {
    const a = mcpToolName('server', 'x'.repeat(80));
    const b = mcpToolName('server', `${'x'.repeat(79)}y`);
    expect(a).toHaveLength(64);
    expect(a).toMatch(/^server_x+_[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
  });

  it('gives a clashing name (server a tool b_c vs server a_b tool c) a distinct hashed name', () => {
    expect(mcpToolName('a', 'b_c')).toBe(mcpToolName('a_b', 'c'));
    expect(disambiguatedName('a_b', 'c')).toMatch(/^a_b_c_[0-9a-f]{8}$/);
  });
});

describe('MCP results', () => {
  it('keeps structured content, joins text, describes images and resources, and turns isError into a tool error', () => {
    expect(outcomeOfMcpResult('t', { content: [{ type: 'text', text: '{}' }], structuredContent: { n: 1 } })).toEqual({ ok: true, result: { n: 1 } });
    expect(
      outcomeOfMcpResult('t', {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toEqual({ ok: true, result: 'a\nb' });
    const described = outcomeOfMcpResult('t', {
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///x.txt', mimeType: 'text/plain', text: 'long text' } },
        { type: 'resource_link', uri: 'file:///y', name: 'y' },
      ],
    });
    expect(described).toEqual({
      ok: true,
      result:
        '[image image/png, 3 bytes, not shown]\n[embedded resource file:///x.txt (text/plain), 9 characters of text, not shown; read it with the server\'s resources]\n[resource link file:///y "y"]',
    });
    expect(outcomeOfMcpResult('t', { content: [{ type: 'text', text: 'nope' }], isError: true })).toEqual({
      ok: false,
      error: { code: 'tool_failed', message: 'tool "t" reported an error: nope', retryable: false },
    });
  });
});
