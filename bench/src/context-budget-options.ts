import { applySettings, int, rejectUnknown, splitFlags, type Setting } from './bench-options.js';

/** Settings of the context-budget benchmark. */
export interface ContextBudgetOptions {
  /** Turns of the scripted session (user question, tool call, tool result, answer each). */
  turns: number;
  /** Context windows asked for; the first is the headline (the runtime's default window). */
  contextLimits: number[];
  /** Where context-budget.json and context-budget.md go. */
  resultsDir: string;
}

export const contextBudgetSettings: Setting<ContextBudgetOptions>[] = [
  { flag: 'turns', env: 'BENCH_CONTEXT_TURNS', apply: (o, v) => (o.turns = int('turns', v, 20)) },
  {
    flag: 'context-limits',
    env: 'BENCH_CONTEXT_LIMITS',
    apply: (o, v) => (o.contextLimits = v.split(',').map((x) => int('context-limits', x.trim(), 16_384))),
  },
  { flag: 'results-dir', env: 'BENCH_RESULTS_DIR', apply: (o, v) => (o.resultsDir = v) },
];

/** Defaults (200 turns; 128k, the runtime's MODEL_CONTEXT_TOKENS, then 32k), then env, then flags. */
export function contextBudgetOptions(o: {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  defaultResultsDir: string;
  ignore?: readonly string[];
}): ContextBudgetOptions {
  const opts: ContextBudgetOptions = { turns: 200, contextLimits: [128_000, 32_000], resultsDir: o.defaultResultsDir };
  const unknown = applySettings(opts, contextBudgetSettings, o.env, splitFlags(o.argv));
  rejectUnknown(unknown, [...contextBudgetSettings.map((s) => s.flag), ...(o.ignore ?? [])]);
  return opts;
}
