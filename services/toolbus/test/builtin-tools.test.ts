import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNonPublicAddress } from '../src/address-guard.js';
import { ArgumentValidator } from '../src/argument-validator.js';
import { builtinTools, dateAddTool, dateDiffTool, httpGetTool, timeNowTool } from '../src/builtin-tools.js';
import { ToolArgumentError, ToolRefusedError } from '../src/toolbus-errors.js';
import type { BuiltinTool, ToolArguments } from '../src/tool-types.js';

const ctx = () => ({ task_id: 't_1', user_id: 'u1', roles: [], signal: new AbortController().signal, idempotencyKey: 't_1:main:1:0' });
const run = (tool: BuiltinTool, args: ToolArguments) => tool.run(args, ctx());

describe('built-in tool schemas', () => {
  const validator = new ArgumentValidator();
  const tools = builtinTools({ http: { allowedHosts: [], allowPrivate: false, maxBytes: 1000 } });

  it.each(tools.map((t) => [t.spec.name, t] as const))('%s has a strict, closed object schema', (_name, tool) => {
    expect(() => validator.prepare(tool.spec.parameters)).not.toThrow();
    expect(tool.spec.parameters).toMatchObject({ type: 'object', additionalProperties: false });
  });

  it('offers time_now, echo, date_add, date_diff and http_get (no memory tools yet)', () => {
    expect(tools.map((t) => t.spec.name)).toEqual(['time_now', 'echo', 'date_add', 'date_diff', 'http_get']);
  });
});

describe('time_now', () => {
  it('gives the UTC instant and the wall clock of the asked time zone', async () => {
    const out = (await run(timeNowTool, { timezone: 'Asia/Kolkata' })) as Record<string, string>;
    expect(Math.abs(Date.parse(out.utc!) - Date.now())).toBeLessThan(5000);
    expect(out.local).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:30$/);
    expect(Date.parse(out.local!)).toBe(Math.floor(Date.parse(out.utc!) / 1000) * 1000);
  });

  it('answers an unknown time zone as an argument the model must fix', async () => {
    await expect(run(timeNowTool, { timezone: 'Mars/Olympus' })).rejects.toThrow(ToolArgumentError);
  });
});

describe('date_add', () => {
  it('keeps the day within the month when adding months, and keeps a plain date plain', async () => {
    expect(await run(dateAddTool, { date: '2024-01-31', months: 1 })).toEqual({ date: '2024-02-29', weekday: 'Thursday' });
  });

  it('adds days, hours and minutes to a date-time on its own offset', async () => {
    expect(await run(dateAddTool, { date: '2025-03-30T23:30:00+02:00', days: 1, hours: 1, minutes: 45 })).toMatchObject({ date: '2025-04-01T01:15:00+02:00' });
  });

  it('subtracts with negative amounts and turns a plain date into a date-time when hours are added', async () => {
    expect(await run(dateAddTool, { date: '2025-01-01', hours: -1 })).toMatchObject({ date: '2024-12-31T23:00:00Z' });
  });
});

describe('date_diff', () => {
  it('returns whole days, hours and minutes and the totals', async () => {
    expect(await run(dateDiffTool, { from: '2025-01-01T00:00:00Z', to: '2025-01-02T03:04:00Z' })).toEqual({
      days: 1,
      hours: 3,
      minutes: 4,
      total_days: 1.1278,
      total_hours: 27.07,
      total_minutes: 1624,
    });
  });

  it('is negative when "to" is before "from", and compares instants across offsets', async () => {
    expect(await run(dateDiffTool, { from: '2025-01-02', to: '2025-01-01T22:00:00-02:00' })).toMatchObject({ days: 0, hours: 0, minutes: 0, total_minutes: 0 });
    expect(await run(dateDiffTool, { from: '2025-01-10', to: '2025-01-03' })).toMatchObject({ days: -7, total_days: -7 });
  });
});

describe('http_get', () => {
  let server: Server;
  let port = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('y'.repeat(50_000));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ hello: 'world', path: req.url }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is disabled while no host is allowed, and says so', async () => {
    const tool = httpGetTool({ allowedHosts: [], allowPrivate: false, maxBytes: 10_000 });
    await expect(run(tool, { url: 'https://example.com/' })).rejects.toThrow(/disabled: no host is allowed.*TOOL_HTTP_ALLOWED_HOSTS/);
  });

  it('refuses a host that is not on the allow-list, naming the allowed ones', async () => {
    const tool = httpGetTool({ allowedHosts: ['api.example.com'], allowPrivate: false, maxBytes: 10_000 });
    await expect(run(tool, { url: 'https://evil.example.net/x' })).rejects.toThrow(/host "evil.example.net" is not allowed; allowed hosts: api.example.com/);
  });

  it('refuses an allowed host that is a loopback address or resolves to one', async () => {
    const tool = httpGetTool({ allowedHosts: ['127.0.0.1', 'localhost'], allowPrivate: false, maxBytes: 10_000 });
    await expect(run(tool, { url: `http://127.0.0.1:${port}/` })).rejects.toThrow(ToolRefusedError);
    await expect(run(tool, { url: `http://localhost:${port}/` })).rejects.toThrow(/resolves to a private, loopback or link-local address/);
  });

  it('fetches from an allowed host when private addresses are allowed', async () => {
    const tool = httpGetTool({ allowedHosts: ['localhost'], allowPrivate: true, maxBytes: 10_000 });
    const out = await run(tool, { url: `http://localhost:${port}/hello` });
    expect(out).toMatchObject({ status: 200, content_type: 'application/json', truncated: false });
    expect(JSON.parse((out as { text: string }).text)).toEqual({ hello: 'world', path: '/hello' });
  });

  it('stops reading at the size cap and cuts the text to max_chars', async () => {
    const tool = httpGetTool({ allowedHosts: [`127.0.0.1:${port}`], allowPrivate: true, maxBytes: 20_000 });
    const out = (await run(tool, { url: `http://127.0.0.1:${port}/big`, max_chars: 1000 })) as Record<string, unknown>;
    expect(out).toMatchObject({ status: 200, bytes_read: 20_000, truncated: true });
    expect(out.text).toHaveLength(1000);
  });

  it('refuses a URL that is not http(s)', async () => {
    const tool = httpGetTool({ allowedHosts: ['localhost'], allowPrivate: true, maxBytes: 10_000 });
    await expect(run(tool, { url: 'file:///etc/passwd' })).rejects.toThrow(ToolArgumentError);
  });
});

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
  ])('%s is not public', (address) => expect(isNonPublicAddress(address)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => expect(isNonPublicAddress(address)).toBe(false));
});
