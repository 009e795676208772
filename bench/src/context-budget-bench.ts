import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bus, request } from '@hermes/bus';
import { contracts, type NewSessionMessage } from '@hermes/contracts';
import { serviceEntry } from '@hermes/devstack';
import { createLogger } from '@hermes/telemetry';
import {
  freePort,
  startChildService,
  startNatsServer,
  startRedisServer,
  startScriptedLlm,
  type ChildService,
  type RecordedRequest,
  type ScriptedResponse,
} from '@hermes/testkit';
import type { ContextBudgetOptions } from './context-budget-options.js';

/** What the issue asks of context assembly on a long session. */
export const CONTEXT_GOALS = { reduction_min: 0.4 } as const;

// The runtime's reserves (job-runner.ts): answer, and tool schemas plus the system prompt.
const RESERVE_OUTPUT = 4096;
const RESERVE_TOOLS = 8192;
const MODEL = 'gpt-4o';
const USER = 'bench-user';
const SESSION = 'bench-long-session';

/**
 * Constraints and deadlines the user states in the first turns. The first two are pinned by the
 * user (sessionPin); the others only said in a message, so they survive only if the summariser
 * lists them and the service pins what it lists.
 */
const CONSTRAINTS = [
  { kind: 'constraint' as const, text: 'Never restart the payments database during business hours (08:00-18:00 CET).' },
  { kind: 'deadline' as const, text: 'The incident report is due to the CTO on 2026-12-04 at 17:00 UTC.' },
  { kind: 'constraint' as const, text: 'All customer-facing messages must be reviewed by Dana before they are sent.' },
  { kind: 'constraint' as const, text: 'Do not roll back release 4.12.0; fix forward only.' },
  { kind: 'deadline' as const, text: 'The eu-west-1 failover drill must be finished by 2026-12-10.' },
  { kind: 'constraint' as const, text: 'Keep the monthly cloud spend for the fix under 2,000 EUR.' },
];
const PINNED_BY_USER = 2;

export interface ContextBudgetRun {
  context_limit: number;
  budget: number;
  tokens_sent: number;
  reduction: number;
  messages_sent: number;
  summary_used: boolean;
  truncated_tool_results: number;
  dropped_messages: number;
  pinned_constraints_kept: number;
  missing_constraints: string[];
  assemble_ms: number;
}

export interface ContextBudgetReport {
  generated_at: string;
  turns: number;
  messages: number;
  model: string;
  tokens_full_history: number;
  tool_result_tokens: number;
  /** Smallest and largest single tool result, tokens. */
  tool_result_tokens_range: [number, number];
  /** The headline run (the runtime's window): its numbers, repeated at the top level. */
  context_limit: number;
  tokens_sent: number;
  reduction: number;
  pinned_constraints: number;
  pinned_constraints_kept: number;
  summarizer_calls: number;
  goal: { reduction_min: number; met: boolean; all_constraints_kept: boolean };
  runs: ContextBudgetRun[];
  settings: {
    reserve_output: number;
    reserve_tools: number;
    tool_result_max_tokens: number;
    summary_trigger_tokens: number;
    summary_keep_recent: number;
    summary_input_tokens: number;
  };
}

/**
 * A long session stored through the memory service (a real process on real NATS and Redis), its
 * running summary written by the scripted summariser, then one context request per window: how
 * many tokens are sent against the whole history, and whether every constraint is still there.
 */
export async function runContextBudgetBench(o: ContextBudgetOptions, say: (line: string) => void): Promise<ContextBudgetReport> {
  const logger = createLogger({ service: 'bench', level: 'silent' });
  const [nats, redis, llm] = await Promise.all([startNatsServer({ jetstream: true }), startRedisServer(), startScriptedLlm({ responder: summariserModel })]);
  const dataDir = mkdtempSync(join(tmpdir(), 'hermes-bench-memory-'));
  const settings = { tool_result_max_tokens: 2000, summary_trigger_tokens: 8000, summary_keep_recent: 10, summary_input_tokens: 6000 };
  let memory: ChildService | undefined;
  const bus = await Bus.connect({ servers: nats.url, name: 'bench-context', logger });
  try {
    const healthPort = await freePort();
    memory = await startChildService({
      name: 'memory',
      entry: serviceEntry('memory'),
      healthPort,
      readyTimeoutMs: 60_000,
      env: {
        HEALTH_PORT: String(healthPort),
        NATS_URL: nats.url,
        REDIS_URL: redis.url,
        OPENAI_BASE_URL: llm.baseUrl,
        OPENAI_API_KEY: 'scripted',
        MEMORY_DATA_DIR: dataDir,
        MEMORY_TOOL_RESULT_MAX_TOKENS: String(settings.tool_result_max_tokens),
        MEMORY_SUMMARY_TRIGGER_TOKENS: String(settings.summary_trigger_tokens),
        MEMORY_SUMMARY_KEEP_RECENT: String(settings.summary_keep_recent),
        MEMORY_SUMMARY_INPUT_TOKENS: String(settings.summary_input_tokens),
      },
    });
    say(`context-budget: storing ${o.turns} turns through the memory service`);
    const toolSizes: number[] = [];
    for (let turn = 1; turn <= o.turns; turn++) {
      const stored = await request(bus, contracts.sessionAppend, { user_id: USER, session_id: SESSION, messages: turnMessages(turn) }, { timeoutMs: 30_000 });
      toolSizes.push(...stored.messages.filter((m) => m.role === 'tool').map((m) => m.tokens));
      if (turn <= PINNED_BY_USER) {
        const fact = CONSTRAINTS[turn - 1]!;
        await request(bus, contracts.sessionPin, { user_id: USER, session_id: SESSION, kind: fact.kind, text: fact.text });
      }
    }
    // Background summaries ran while the session grew; this folds in whatever they had not yet.
    say('context-budget: waiting for the running summary to catch up');
    await request(bus, contracts.sessionSummarize, { user_id: USER, session_id: SESSION }, { timeoutMs: 300_000 });
    const [listed] = (await request(bus, contracts.sessionList, { user_id: USER })).sessions;
    if (!listed) throw new Error('the session is not listed');
    const runs: ContextBudgetRun[] = [];
    for (const limit of o.contextLimits) {
      const started = performance.now();
      const context = await request(bus, contracts.sessionContext, {
        user_id: USER,
        session_id: SESSION,
        model: MODEL,
        context_limit: limit,
        reserve_output: RESERVE_OUTPUT,
        reserve_tools: RESERVE_TOOLS,
      });
      const assembleMs = performance.now() - started;
      // The check: each constraint's exact text is somewhere in what would be sent to the model.
      const sent = context.messages.map((m) => m.content ?? '').join('\n');
      const missing = CONSTRAINTS.filter((c) => !sent.includes(c.text)).map((c) => c.text);
      runs.push({
        context_limit: limit,
        budget: limit - RESERVE_OUTPUT - RESERVE_TOOLS,
        tokens_sent: context.tokens,
        reduction: round(1 - context.tokens / listed.tokens),
        messages_sent: context.messages.length,
        summary_used: context.summary_used,
        truncated_tool_results: context.truncated_tool_results,
        dropped_messages: context.dropped_messages,
        pinned_constraints_kept: CONSTRAINTS.length - missing.length,
        missing_constraints: missing,
        assemble_ms: round(assembleMs),
      });
      say(
        `context-budget: window ${limit}: ${context.tokens} of ${listed.tokens} tokens sent (${(100 * (1 - context.tokens / listed.tokens)).toFixed(1)} % fewer), constraints kept ${CONSTRAINTS.length - missing.length}/${CONSTRAINTS.length}`,
      );
    }
    const head = runs[0]!;
    return {
      generated_at: new Date().toISOString(),
      turns: o.turns,
      messages: listed.message_count,
      model: MODEL,
      tokens_full_history: listed.tokens,
      tool_result_tokens: toolSizes.reduce((n, t) => n + t, 0),
      tool_result_tokens_range: [Math.min(...toolSizes), Math.max(...toolSizes)],
      context_limit: head.context_limit,
      tokens_sent: head.tokens_sent,
      reduction: head.reduction,
      pinned_constraints: CONSTRAINTS.length,
      pinned_constraints_kept: head.pinned_constraints_kept,
      summarizer_calls: llm.requests.filter(isSummariserRequest).length,
      goal: {
        reduction_min: CONTEXT_GOALS.reduction_min,
        met: head.reduction >= CONTEXT_GOALS.reduction_min,
        all_constraints_kept: runs.every((r) => r.missing_constraints.length === 0),
      },
      runs,
      settings: { reserve_output: RESERVE_OUTPUT, reserve_tools: RESERVE_TOOLS, ...settings },
    };
  } finally {
    await bus.drain().catch(() => {});
    await memory?.stop(10_000);
    await Promise.all([nats.stop(), redis.stop(), llm.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One turn as an agent loop stores it: question, tool call, a large tool result, answer. */
function turnMessages(turn: number): NewSessionMessage[] {
  const service = SERVICES[turn % SERVICES.length]!;
  const constraint = CONSTRAINTS[turn - 1];
  const question = `Turn ${turn}: check the error rate and the slowest endpoints of ${service} over the last hour and tell me what changed.`;
  const callId = `call_${turn}`;
  return [
    { role: 'user', content: constraint ? `${question} ${constraint.kind === 'deadline' ? 'Deadline' : 'Constraint'}: ${constraint.text}` : question },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ tool_call_id: callId, name: 'query_logs', arguments: JSON.stringify({ service, since: '1h', limit: 400 }) }],
    },
    { role: 'tool', tool_call_id: callId, content: logRows(turn, service) },
    {
      role: 'assistant',
      content: `For ${service} the error rate is ${(turn % 7) / 10 + 0.2} % (was ${(turn % 5) / 10 + 0.1} % an hour ago); the slowest endpoint is /v2/orders/${turn % 13} at p99 ${800 + ((turn * 37) % 900)} ms. Nothing else changed.`,
    },
  ];
}

const SERVICES = ['payments', 'orders', 'search', 'checkout', 'inventory', 'accounts', 'notifications'];

/** A JSON log query result of 20 to 199 rows (about 1k to 10k tokens), deterministic per turn. */
function logRows(turn: number, service: string): string {
  const rows = 20 + ((turn * 53) % 180);
  const out = [];
  for (let i = 0; i < rows; i++) {
    out.push({
      ts: new Date(Date.UTC(2026, 10, 30, 3, 0, (turn * 311 + i * 7) % 3600)).toISOString(),
      service,
      level: i % 11 === 0 ? 'error' : 'info',
      route: `/v2/${['orders', 'carts', 'users', 'items'][i % 4]}/${(turn * i) % 97}`,
      status: i % 11 === 0 ? 502 : 200,
      ms: (turn * 17 + i * 29) % 1200,
    });
  }
  return JSON.stringify({ rows: out, truncated: false });
}

function isSummariserRequest(r: RecordedRequest): boolean {
  const system = r.body.messages?.find((m) => m.role === 'system');
  return typeof system?.content === 'string' && system.content.includes('running summary of a conversation');
}

/**
 * The scripted summariser: it answers like a model following the prompt — a summary of about 300
 * words at most (the previous one's tail plus a line per new user request) and, as pins, the
 * constraints and deadlines the user stated in the new messages. Other requests (the long-term
 * memory judge) get an empty answer of their shape.
 */
function summariserModel(r: RecordedRequest): ScriptedResponse {
  if (!isSummariserRequest(r)) return { content: '{"memories": []}' };
  const input = String(r.body.messages?.find((m) => m.role === 'user')?.content ?? '');
  const previous = /Previous summary:\n([\s\S]*?)\n\nNew messages:/.exec(input)?.[1] ?? '';
  const userLines = input.split('\n').filter((line) => /^\[[^\]]+\] user: /.test(line));
  const pinned = userLines.flatMap((line) => {
    const m = /(Constraint|Deadline): (.*)$/.exec(line);
    return m ? [{ kind: m[1] === 'Deadline' ? 'deadline' : 'constraint', text: m[2]!.trim() }] : [];
  });
  const asked = userLines.map((line) => /Turn (\d+): check the error rate and the slowest endpoints of (\S+)/.exec(line)).filter((m) => m !== null);
  const added =
    asked.length > 0
      ? `Turns ${asked[0]![1]}-${asked.at(-1)![1]}: the user asked for error rates and slow endpoints of ${[...new Set(asked.map((m) => m[2]))].join(', ')}; each was answered from query_logs, nothing changed.`
      : '';
  const words = `${previous === '(none yet)' ? '' : previous} ${added}`.trim().split(/\s+/);
  return { content: JSON.stringify({ summary: words.slice(-300).join(' '), pinned }) };
}

const round = (n: number) => Math.round(n * 1000) / 1000;
