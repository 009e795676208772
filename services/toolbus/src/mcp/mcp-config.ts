import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { Type } from '@sinclair/typebox';
import { ArgumentRule, ArgumentTransform, argumentPolicyProblems, validate } from '@hermes/contracts';
import { redactText, secretsOf, urlCredentialProblem } from './mcp-secrets.js';

/** Per-tool overrides of what a server's tools get by default. */
export interface McpToolPolicy {
  require_confirm?: boolean;
  roles?: string[];
  timeout_ms?: number;
}

/** What only one tool can have: its argument transforms and rules (as in a ToolSpec). */
export interface McpToolArgumentPolicy extends McpToolPolicy {
  transforms?: ArgumentTransform[];
  rules?: ArgumentRule[];
}

interface McpServerCommon extends McpToolPolicy {
  name: string;
  enabled_tools?: string[];
  disabled_tools?: string[];
  /** How long connecting and initialising may take before it counts as a failed attempt. */
  connect_timeout_ms?: number;
  /** Hide a tool whose description or schema changed since first seen until `mcp approve-change`. */
  pin_tools?: boolean;
  tools?: Record<string, McpToolArgumentPolicy>;
  /** Values never to print (header values, secret env values): redacted from every error text. */
  secrets: string[];
}

export interface McpStdioServerConfig extends McpServerCommon {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface McpHttpServerConfig extends McpServerCommon {
  transport: 'http';
  url: string;
  headers: Record<string, string>;
}

/** One configured MCP server, with `${ENV}` references resolved. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** A server entry that could not be used, and why (the field named, never a secret's value). */
export interface McpConfigProblem {
  server?: string;
  field?: string;
  message: string;
}

export interface McpConfig {
  servers: McpServerConfig[];
  /** Problems of single servers (those servers are left out) or of the whole file. */
  problems: McpConfigProblem[];
  /** True when the file itself could not be read or parsed: no server could be configured. */
  fatal: boolean;
}

/** A server name: it prefixes tool names, so it is kept short and plain. */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

const COMMON_KEYS = [
  'transport',
  'enabled',
  'enabled_tools',
  'disabled_tools',
  'timeout_ms',
  'connect_timeout_ms',
  'require_confirm',
  'roles',
  'pin_tools',
  'tools',
];
const STDIO_KEYS = ['command', 'args', 'env', 'cwd'];
const HTTP_KEYS = ['url', 'headers'];
const POLICY_KEYS = ['require_confirm', 'roles', 'timeout_ms', 'transforms', 'rules'];
const ToolArgumentPolicy = Type.Object({ transforms: Type.Optional(Type.Array(ArgumentTransform)), rules: Type.Optional(Type.Array(ArgumentRule)) });

/** Reads and checks the MCP config file (`.json`, or YAML for anything else). */
export async function loadMcpConfig(path: string, env: NodeJS.ProcessEnv = process.env): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return {
      servers: [],
      fatal: true,
      problems: [{ message: `cannot read MCP config file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }],
    };
  }
  let doc: unknown;
  try {
    doc = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    return {
      servers: [],
      fatal: true,
      problems: [{ message: `MCP config file ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message}` }],
    };
  }
  return parseMcpConfig(doc, env);
}

/**
 * Checks a parsed config document: `{ servers: { <name>: { transport, ... } } }`. Every problem
 * names the server and the field; a server with problems is left out and the others are kept.
 * Disabled servers (`enabled: false`) are left out silently.
 */
export function parseMcpConfig(doc: unknown, env: NodeJS.ProcessEnv = process.env): McpConfig {
  if (doc === null || doc === undefined) return { servers: [], problems: [], fatal: false };
  if (!isRecord(doc)) return { servers: [], fatal: true, problems: [{ message: 'the MCP config must be an object with a "servers" map' }] };
  const unknownTop = Object.keys(doc).filter((k) => k !== 'servers');
  const problems: McpConfigProblem[] = unknownTop.map((k) => ({ field: k, message: `unknown top-level field "${k}" (expected only "servers")` }));
  const servers: McpServerConfig[] = [];
  if (doc.servers === undefined) return { servers, problems, fatal: false };
  if (!isRecord(doc.servers))
    return { servers, fatal: true, problems: [...problems, { field: 'servers', message: '"servers" must be a map from server name to its settings' }] };
  for (const [name, raw] of Object.entries(doc.servers)) {
    const found: McpConfigProblem[] = [];
    const server = parseServer(name, raw, env, (field, message) => found.push({ server: name, field, message: `server "${name}": ${field}: ${message}` }));
    problems.push(...found);
    if (server && found.length === 0) servers.push(server);
  }
  return { servers, problems, fatal: false };
}

type Report = (field: string, message: string) => void;
type EnvLookup = (name: string) => string | undefined;

function parseServer(name: string, raw: unknown, processEnv: NodeJS.ProcessEnv, report: Report): McpServerConfig | undefined {
  // Every value read from the environment is treated as a secret.
  const expanded: string[] = [];
  const env: EnvLookup = (key) => {
    const v = processEnv[key];
    if (v !== undefined) expanded.push(v);
    return v;
  };
  if (!SERVER_NAME.test(name)) report('name', `must match ${SERVER_NAME.source} (it prefixes the tool names)`);
  if (!isRecord(raw)) {
    report('(server)', 'must be an object');
    return undefined;
  }
  if (raw.enabled === false) return undefined;
  if (raw.enabled !== undefined && typeof raw.enabled !== 'boolean') report('enabled', 'must be true or false');
  const transport = raw.transport;
  if (transport !== 'stdio' && transport !== 'http') {
    report('transport', `must be "stdio" or "http" (got ${JSON.stringify(transport) ?? 'nothing'})`);
    return undefined;
  }
  const allowed = new Set([...COMMON_KEYS, ...(transport === 'stdio' ? STDIO_KEYS : HTTP_KEYS)]);
  for (const key of Object.keys(raw)) if (!allowed.has(key)) report(key, `unknown field for a ${transport} server`);
  const common = parseCommon(name, raw, report);
  const str = (field: string, v: unknown): string | undefined => {
    if (typeof v !== 'string' || v.length === 0) {
      report(field, 'must be a non-empty string');
      return undefined;
    }
    return expand(v, env, field, report);
  };
  const map = (field: string, v: unknown): Record<string, string> => {
    if (v === undefined) return {};
    if (!isRecord(v)) {
      report(field, 'must be a map of strings');
      return {};
    }
    const out: Record<string, string> = {};
    for (const [k, value] of Object.entries(v)) {
      if (typeof value !== 'string') report(`${field}.${k}`, 'must be a string');
      else out[k] = expand(value, env, `${field}.${k}`, report) ?? '';
    }
    return out;
  };
  if (transport === 'stdio') {
    const command = str('command', raw.command);
    let args: string[] = [];
    if (raw.args !== undefined) {
      if (!Array.isArray(raw.args) || raw.args.some((a) => typeof a !== 'string')) report('args', 'must be a list of strings');
      else args = raw.args.map((a: string, i) => expand(a, env, `args[${i}]`, report) ?? '');
    }
    const cwd = raw.cwd === undefined ? undefined : str('cwd', raw.cwd);
    if (command === undefined) return undefined;
    const childEnv = map('env', raw.env);
    return { ...common, transport, command, args, env: childEnv, ...(cwd ? { cwd } : {}), secrets: secretsOf({ env: childEnv, expanded }) };
  }
  const url = str('url', raw.url);
  if (url !== undefined) {
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') report('url', 'must be an http:// or https:// URL');
      const credential = urlCredentialProblem(parsed);
      if (credential) report('url', credential);
    } catch {
      report('url', 'is not a valid URL');
    }
  }
  if (url === undefined) return undefined;
  const headers = map('headers', raw.headers);
  return { ...common, transport, url, headers, secrets: secretsOf({ headers, expanded }) };
}

function parseCommon(name: string, raw: Record<string, unknown>, report: Report): Omit<McpServerCommon, 'secrets'> {
  const out: Omit<McpServerCommon, 'secrets'> = { name, ...parsePolicy(raw, '', report) };
  for (const field of ['enabled_tools', 'disabled_tools'] as const) {
    const v = raw[field];
    if (v === undefined) continue;
    if (!Array.isArray(v) || v.some((t) => typeof t !== 'string')) report(field, 'must be a list of tool names (as the server names them)');
    else out[field] = v as string[];
  }
  if (raw.connect_timeout_ms !== undefined) {
    if (!isMs(raw.connect_timeout_ms)) report('connect_timeout_ms', 'must be an integer between 1 and 3600000');
    else out.connect_timeout_ms = raw.connect_timeout_ms;
  }
  if (raw.pin_tools !== undefined) {
    if (typeof raw.pin_tools !== 'boolean') report('pin_tools', 'must be true or false');
    else out.pin_tools = raw.pin_tools;
  }
  if (raw.tools !== undefined) {
    if (!isRecord(raw.tools)) report('tools', 'must be a map from tool name to { require_confirm, roles, timeout_ms }');
    else {
      out.tools = {};
      for (const [tool, policy] of Object.entries(raw.tools)) {
        if (!isRecord(policy)) {
          report(`tools.${tool}`, 'must be an object');
          continue;
        }
        for (const key of Object.keys(policy))
          if (!POLICY_KEYS.includes(key)) report(`tools.${tool}.${key}`, `unknown field (expected ${POLICY_KEYS.join(', ')})`);
        out.tools[tool] = { ...parsePolicy(policy, `tools.${tool}.`, report), ...parseArgumentPolicy(policy, `tools.${tool}`, report) };
      }
    }
  }
  return out;
}

function parsePolicy(raw: Record<string, unknown>, at: string, report: Report): McpToolPolicy {
  const out: McpToolPolicy = {};
  if (raw.require_confirm !== undefined) {
    if (typeof raw.require_confirm !== 'boolean') report(`${at}require_confirm`, 'must be true or false');
    else out.require_confirm = raw.require_confirm;
  }
  if (raw.roles !== undefined) {
    if (!Array.isArray(raw.roles) || raw.roles.some((r) => typeof r !== 'string' || r.length === 0)) report(`${at}roles`, 'must be a list of role names');
    else out.roles = raw.roles as string[];
  }
  if (raw.timeout_ms !== undefined) {
    if (!isMs(raw.timeout_ms)) report(`${at}timeout_ms`, 'must be an integer between 1 and 3600000');
    else out.timeout_ms = raw.timeout_ms;
  }
  return out;
}

/** A tool's `transforms` and `rules`, checked as the ToolBus checks a provider's (the same schema and problems). */
function parseArgumentPolicy(raw: Record<string, unknown>, at: string, report: Report): Pick<McpToolArgumentPolicy, 'transforms' | 'rules'> {
  const given = { ...(raw.transforms !== undefined ? { transforms: raw.transforms } : {}), ...(raw.rules !== undefined ? { rules: raw.rules } : {}) };
  const shape = validate(ToolArgumentPolicy, given);
  const problems = shape.ok ? argumentPolicyProblems(shape.value) : shape.issues;
  for (const p of problems) report(`${at}${p.path.replace(/\//g, '.')}`, p.message);
  return shape.ok && problems.length === 0 ? shape.value : {};
}

/** Replaces `${NAME}` with the environment variable; a missing one is a problem naming the field, not the value. */
function expand(value: string, env: EnvLookup, field: string, report: Report): string | undefined {
  let missing = false;
  const out = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, key: string) => {
    const v = env(key);
    if (v === undefined) {
      report(field, `refers to the environment variable ${key}, which is not set`);
      missing = true;
      return '';
    }
    return v;
  });
  return missing ? undefined : out;
}

function isMs(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 3_600_000;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The config as it may be shown: environment and header values hidden, since they carry secrets. */
export function redactedConfig(config: McpServerConfig): Record<string, unknown> {
  const { secrets, ...c } = config;
  if (c.transport === 'stdio')
    return { ...c, args: c.args.map((a) => redactText(a, secrets)), env: Object.fromEntries(Object.keys(c.env).map((k) => [k, '***'])) };
  // Credentials are refused in URLs at load; a query string is still hidden, it may carry ids.
  const url = new URL(c.url);
  url.search = url.search ? '?***' : '';
  return { ...c, url: url.toString(), headers: Object.fromEntries(Object.keys(c.headers).map((k) => [k, '***'])) };
}

/** Whether two configs of a server differ (a changed server is restarted on reload). */
export function sameServerConfig(a: McpServerConfig, b: McpServerConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
