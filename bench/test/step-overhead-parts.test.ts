import { describe, expect, it } from 'vitest';
import { benchOptions } from '../src/bench-options.js';
import { contextBudgetOptions } from '../src/context-budget-options.js';
import { selectBenchmarks } from '../src/bench-selection.js';
import { runLocalTool, toolMessageContent } from '../src/direct-agent.js';
import { parseStepTiming } from '../src/step-breakdown.js';
import { stepOverheadOptions } from '../src/step-overhead-options.js';
import { StepScript, answerFor, goalFor, goalShape, intervals, runIdOf } from '../src/step-script.js';

describe('selecting benchmarks', () => {
  it('runs every benchmark but the long load runs by default and passes the other flags on', () => {
    expect(selectBenchmarks({ argv: ['--capacity', '8'], env: {} })).toEqual({
      only: ['semaphore', 'step-overhead', 'step-growth', 'memory-recall', 'context-budget'],
      argv: ['--capacity', '8'],
    });
  });

  it('--only (or BENCH_ONLY) picks some, in their usual order', () => {
    expect(selectBenchmarks({ argv: ['--only', 'step-overhead'], env: {} }).only).toEqual(['step-overhead']);
    expect(selectBenchmarks({ argv: ['--only=step-overhead,semaphore'], env: {} }).only).toEqual(['semaphore', 'step-overhead']);
    expect(selectBenchmarks({ argv: [], env: { BENCH_ONLY: 'semaphore' } }).only).toEqual(['semaphore']);
    expect(selectBenchmarks({ argv: ['--only', 'context-budget'], env: {} }).only).toEqual(['context-budget']);
    expect(selectBenchmarks({ argv: ['--only', 'overload,throughput'], env: {} }).only).toEqual(['throughput', 'overload']);
  });

  it('an unknown benchmark name is an error', () => {
    expect(() => selectBenchmarks({ argv: ['--only', 'steps'], env: {} })).toThrow(/unknown benchmark "steps"/);
  });

  it("each benchmark ignores the other's flags but not unknown ones", () => {
    const argv = ['--steps', '5', '--capacity', '4'];
    expect(benchOptions({ argv, env: {}, defaultResultsDir: '/r', ignore: ['steps'] }).capacity).toBe(4);
    expect(stepOverheadOptions({ argv, env: {}, defaultResultsDir: '/r', ignore: ['capacity'] }).steps).toBe(5);
    expect(() => stepOverheadOptions({ argv: ['--stepz', '5'], env: {}, defaultResultsDir: '/r' })).toThrow(/unknown argument "--stepz"/);
  });
});

describe('stepOverheadOptions', () => {
  it('defaults to 20 steps, 10 tasks after 2 warm-up tasks, echo, with the breakdown', () => {
    expect(stepOverheadOptions({ argv: [], env: {}, defaultResultsDir: '/r' })).toEqual({
      steps: 20,
      tasks: 10,
      warmupTasks: 2,
      tool: 'echo',
      breakdown: true,
      hopIterations: 300,
      resultsDir: '/r',
    });
  });

  it('takes env, then flags; refuses what a task budget cannot hold', () => {
    expect(stepOverheadOptions({ argv: ['--tool', 'time_now', '--breakdown=false'], env: { BENCH_TASKS: '3' }, defaultResultsDir: '/r' })).toMatchObject({
      tasks: 3,
      tool: 'time_now',
      breakdown: false,
    });
    expect(() => stepOverheadOptions({ argv: ['--steps', '1001'], env: {}, defaultResultsDir: '/r' })).toThrow(/steps/);
    expect(() => stepOverheadOptions({ argv: ['--tool', 'http_get'], env: {}, defaultResultsDir: '/r' })).toThrow(/tool/);
  });
});

describe('the scripted steps', () => {
  const body = (runId: string, toolResults: number) => ({
    tools: [{ type: 'function', function: { name: 'echo', parameters: {} } }],
    messages: [
      { role: 'system', content: 'x' },
      { role: 'user', content: goalFor(runId, 4) },
      ...Array.from({ length: toolResults }, (_, i) => [
        { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'echo', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: `c${i}`, content: '{}' },
      ]).flat(),
    ],
  });

  it('asks for the tool with new arguments until steps - 1 results are in, then answers', () => {
    expect(answerFor({ steps: 4, tool: 'echo', done: 0 })).toMatchObject({ toolCalls: [{ name: 'echo', arguments: { text: 'step 1' } }] });
    expect(answerFor({ steps: 4, tool: 'echo', done: 2 })).toMatchObject({ toolCalls: [{ name: 'echo', arguments: { text: 'step 3' } }] });
    expect(answerFor({ steps: 4, tool: 'echo', done: 3 })).toMatchObject({ content: 'done after 3 tool calls' });
  });

  it('records arrivals per run id, found in the goal', () => {
    let t = 0;
    const script = new StepScript({ steps: 4, tool: 'echo', now: () => (t += 2.5) });
    expect(runIdOf(body('run-a', 0))).toBe('run-a');
    for (let n = 0; n < 4; n++) script.responder({ body: body('run-a', n), headers: {}, receivedAt: 0 });
    script.responder({ body: body('run-b', 0), headers: {}, receivedAt: 0 });
    expect(script.arrivalsOf('run-a')).toEqual([2.5, 5, 7.5, 10]);
    expect(intervals(script.arrivalsOf('run-a'))).toEqual([2.5, 2.5, 2.5]);
    expect(script.arrivalsOf('run-b')).toEqual([12.5]);
  });

  it('answers a planning request with the goal as one subtask, and does not count it as a step', () => {
    const script = new StepScript({ steps: 4, tool: 'echo', now: () => 1 });
    const goal = goalFor('run-p', 4);
    const planning = {
      model: 'm',
      messages: [
        { role: 'system' as const, content: `You are the Hermes planner.\nGoal to plan: ${goal}\nAnswer with ONLY one JSON object` },
        { role: 'user' as const, content: goal },
      ],
    };
    const answer = script.responder({ body: planning, headers: {}, receivedAt: 0 });
    expect(JSON.parse((answer as { content: string }).content)).toEqual({ subtasks: [{ id: 'work', intent: goal, depends_on: [] }] });
    expect(script.arrivalsOf('run-p')).toEqual([]);
  });

  it('does not count a request that offers no tools (a memory summary or extraction quoting the goal)', () => {
    const script = new StepScript({ steps: 4, tool: 'echo', now: () => 1 });
    const { tools: _tools, ...judge } = body('run-j', 0);
    expect(script.responder({ body: judge, headers: {}, receivedAt: 0 })).toEqual({ content: 'not a benchmark step' });
    expect(script.arrivalsOf('run-j')).toEqual([]);
  });

  it('reads the length and result padding of a task from its goal', () => {
    expect(goalShape(goalFor('run-g', 200, 20_000))).toEqual({ steps: 200, padBytes: 20_000 });
    expect(goalShape(goalFor('run-g', 10))).toEqual({ steps: 10, padBytes: 0 });
    expect(answerFor({ steps: 200, tool: 'bench_record', done: 4, padBytes: 100 })).toMatchObject({
      toolCalls: [{ name: 'bench_record', arguments: { entry: 'step 5', pad: 100 } }],
    });
  });

  it('the direct loop feeds back what the runtime would', () => {
    expect(runLocalTool('bench_record', { entry: 'step 1', pad: 3 })).toEqual({ recorded: 'step 1', padding: 'xxx' });
    expect(toolMessageContent(runLocalTool('echo', { text: 'step 1' }))).toBe('{"ok":true,"result":{"result":"step 1"}}');
    expect(runLocalTool('time_now', {})).toMatchObject({ timezone: 'UTC' });
  });
});

describe('the runtime step timings', () => {
  it('are read from its debug log lines, with the task id', () => {
    const line = JSON.stringify({
      level: 20,
      task_id: 't_1',
      step_timing: { step: 2, started_at: 1.5, total_ms: 4, llm_ms: 2, other_ms: 2 },
      msg: 'step timing',
    });
    expect(parseStepTiming(`runtime-timed | ${line}`)).toEqual([{ task_id: 't_1', step: 2, started_at: 1.5, total_ms: 4, llm_ms: 2, other_ms: 2 }]);
    expect(parseStepTiming('{"msg":"job started"}')).toEqual([]);
  });
});

describe('contextBudgetOptions', () => {
  it("defaults to 200 turns at the 128k and 32k windows; flags override and other benches' flags are ignored", () => {
    expect(contextBudgetOptions({ argv: [], env: {}, defaultResultsDir: '/r' })).toEqual({ turns: 200, contextLimits: [128_000, 32_000], resultsDir: '/r' });
    const opts = contextBudgetOptions({
      argv: ['--turns', '50', '--context-limits', '64000,16384', '--capacity', '4'],
      env: {},
      defaultResultsDir: '/r',
      ignore: ['capacity'],
    });
    expect(opts).toMatchObject({ turns: 50, contextLimits: [64_000, 16_384] });
    expect(() => contextBudgetOptions({ argv: ['--context-limits', '1000'], env: {}, defaultResultsDir: '/r' })).toThrow();
  });
});
