import { fileURLToPath } from 'node:url';
import type { ChatRequestBody } from '@hermes/testkit';
import { startChildService, type ChildService } from '@hermes/testkit';
import { BenchError } from './bench-errors.js';
import type { StepTool } from './step-script.js';

export const MODEL_SETTINGS_ENV = 'BENCH_MODEL_SETTINGS';
export const MODEL_READY_PREFIX = 'bench-model-ready ';

export interface ModelSettings {
  steps: number;
  tool: StepTool;
  /** Added to every answer (default 0: at once). */
  latencyMs?: number;
}

/** What reached the model since it started. */
export interface ModelStats {
  calls: { plan: number; step: number; background: number; other: number };
  in_flight: number;
  /** The most chat completions in flight at once: the LLM cap as the model saw it. */
  max_in_flight: number;
  /** [epoch second, calls that arrived in it], oldest first. */
  per_second: Array<[number, number]>;
}

/** What the model process prints once it listens. */
export interface ModelReady {
  /** The OpenAI-compatible endpoint. */
  baseUrl: string;
  /** Where the recorded arrival times are read. */
  controlUrl: string;
}

const entry = fileURLToPath(new URL('./model-main.js', import.meta.url));

/** The scripted model of the step-overhead benchmark, running as its own process. */
export class ModelProcess {
  private constructor(
    private readonly child: ChildService,
    readonly baseUrl: string,
    private readonly controlUrl: string,
  ) {}

  static async start(settings: ModelSettings): Promise<ModelProcess> {
    const child = await startChildService({ name: 'bench-model', entry, env: { [MODEL_SETTINGS_ENV]: JSON.stringify(settings) } });
    try {
      const line = await child.waitForLog(new RegExp(`^${MODEL_READY_PREFIX}`), 20_000);
      const ready = JSON.parse(line.slice(MODEL_READY_PREFIX.length)) as ModelReady;
      return new ModelProcess(child, ready.baseUrl, ready.controlUrl);
    } catch (err) {
      await child.kill();
      throw new BenchError('model_failed', `the bench model did not start: ${(err as Error).message}\n${child.logs.slice(-10).join('\n')}`, { cause: err });
    }
  }

  get pid(): number {
    return this.child.pid;
  }

  /** When each LLM request of a run reached the model (performance.now() of the model process), oldest first. */
  async arrivalsOf(runId: string): Promise<number[]> {
    return (await this.get(`/arrivals/${runId}`)) as number[];
  }

  /** The first request body of a run, as the model received it. */
  async firstRequestOf(runId: string): Promise<ChatRequestBody | null> {
    return (await this.get(`/first-request/${runId}`)) as ChatRequestBody | null;
  }

  async stats(): Promise<ModelStats> {
    return (await this.get('/stats')) as ModelStats;
  }

  async stop(): Promise<void> {
    await this.child.stop(5000);
  }

  private async get(path: string): Promise<unknown> {
    const res = await fetch(`${this.controlUrl}${path}`);
    if (!res.ok) throw new BenchError('model_control', `GET ${path} answered ${res.status}`);
    return res.json();
  }
}
