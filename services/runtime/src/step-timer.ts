import { performance } from 'node:perf_hooks';

/** Where one agent step's time went, in ms: from an LLM call's start to the next one's (or the answer's checkpoint). */
export interface StepTiming {
  step: number;
  /** When the step began (its LLM call was made), in epoch ms with sub-ms precision, to line it up with other processes' clocks. */
  started_at: number;
  total_ms: number;
  /** `LlmClient.chat`: permit, HTTP call, release. */
  llm_ms?: number;
  /** Checkpoint of the answer (with its tool calls, or the final one). */
  checkpoint_ms?: number;
  /** Waiting for the step's tool replies once its checkpoint is stored (side-effect-free calls were sent with it). */
  tools_ms?: number;
  /** Everything else (building messages, events, the event loop): the total less the phases that do not overlap. */
  other_ms: number;
}

export type StepPhase = 'llm' | 'checkpoint' | 'tools';

/**
 * Times the phases of each agent step (RUNTIME_STEP_TIMING), to show where a step's time goes.
 * The default {@link noStepTimer} only runs what it is given.
 */
export interface StepTimer {
  /** Runs `work` and adds its duration to the current step's `phase`. */
  time<T>(phase: StepPhase, work: () => Promise<T>): Promise<T>;
  /** Ends the current step (reporting it) and starts step `step`. */
  startStep(step: number): void;
  /** Ends the current step, reporting it. */
  end(): void;
}

export const noStepTimer: StepTimer = {
  time: (_phase, work) => work(),
  startStep: () => undefined,
  end: () => undefined,
};

/** A timer that reports every finished step to `report`. */
export function stepTimer(report: (t: StepTiming) => void): StepTimer {
  let current: { step: number; started: number; phases: Partial<Record<StepPhase, number>> } | undefined;
  const end = () => {
    if (!current) return;
    const total = performance.now() - current.started;
    const phases = Object.fromEntries(Object.entries(current.phases).map(([k, v]) => [`${k}_ms`, round(v)]));
    const busy = Object.values(current.phases).reduce((a, v) => a + v, 0);
    report({
      step: current.step,
      started_at: round(performance.timeOrigin + current.started),
      total_ms: round(total),
      ...phases,
      other_ms: round(total - busy),
    });
    current = undefined;
  };
  return {
    async time(phase, work) {
      const started = performance.now();
      try {
        return await work();
      } finally {
        if (current) {
          current.phases[phase] = (current.phases[phase] ?? 0) + performance.now() - started;
        }
      }
    },
    startStep(step) {
      end();
      current = { step, started: performance.now(), phases: {} };
    },
    end,
  };
}

const round = (n: number) => Math.round(n * 1000) / 1000;
