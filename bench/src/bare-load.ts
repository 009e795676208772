import { performance } from 'node:perf_hooks';
import { DirectAgent } from './direct-agent.js';
import { ModelProcess } from './model-process.js';
import { ProcessCpu } from './process-cpu.js';
import { round } from './stats.js';
import { goalFor, type StepTool } from './step-script.js';
import type { RequestShape } from './step-overhead-bench.js';

export interface BareLoadResult {
  tasks: number;
  concurrency: number;
  wall_ms: number;
  steps_per_s: number;
  cpu_ms_per_step: Record<string, number> | undefined;
}

/**
 * The baseline of a load run: `concurrency` agent loops at once in one process, each the bare
 * openai-SDK loop with a local tool, sending what the runtime sent (`template`) to a model process
 * of its own that answers at once.
 */
export async function runBareLoad(o: { tasks: number; steps: number; tool: StepTool; concurrency: number; template: RequestShape }): Promise<BareLoadResult> {
  const model = await ModelProcess.start({ steps: o.steps, tool: o.tool });
  try {
    const direct = new DirectAgent(model.baseUrl);
    const cpu = new ProcessCpu(() => ({ model: model.pid }), 'bench (direct loops)');
    const stamp = `bare-${Date.now().toString(36)}`;
    let next = 0;
    let steps = 0;
    const loop = async () => {
      for (let i = next++; i < o.tasks; i = next++) {
        const runId = `${stamp}-${i}`;
        const r = await direct.run({
          system: o.template.system.split(o.template.runId).join(runId),
          goal: goalFor(runId, o.steps),
          tools: o.template.tools,
          model: 'scripted-demo',
          tool: o.tool,
          maxCalls: o.steps + 1,
        });
        steps += r.llmCalls;
      }
    };
    const started = performance.now();
    cpu.start();
    await Promise.all(Array.from({ length: o.concurrency }, loop));
    cpu.stop();
    const wallMs = performance.now() - started;
    return {
      tasks: o.tasks,
      concurrency: o.concurrency,
      wall_ms: round(wallMs, 0),
      steps_per_s: round((steps / wallMs) * 1000, 1),
      cpu_ms_per_step: cpu.per(steps),
    };
  } finally {
    await model.stop();
  }
}
