import type { RuntimeJob } from '@hermes/contracts';
import { readRecording, type Bus } from '@hermes/bus';
import type { LlmClient } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import { JobRecorder } from './job-recorder.js';
import { JobReplayer } from './job-replayer.js';
import type { JobSeams, ToolSeam } from './model-seam.js';
import { shouldRecord, type RecordingPolicy } from './recording-policy.js';

/**
 * Picks each job's seams to the model and the tools: the LLM client and the toolbus as they are,
 * with a recorder in front when the job is recorded, and a replayer (the replay-mode pool) when
 * the task replays a recording or a script.
 */
export class JobSeamFactory {
  constructor(private readonly o: { bus: Bus; llm: LlmClient; tools: ToolSeam; policy: RecordingPolicy }) {}

  async forJob(job: RuntimeJob, logger: Logger): Promise<JobSeams> {
    const direct: JobSeams = { llm: this.o.llm, tools: this.o.tools };
    if (!shouldRecord(this.o.policy, job)) return direct;
    const recorder = new JobRecorder({ bus: this.o.bus, job, logger });
    if (!job.replay) return recorder.wrap(direct);
    const entries = await readRecording(this.o.bus, job.replay.source_task);
    const replayer = new JobReplayer({ source: job.replay, entries, recorder, subtaskId: job.subtask_id, model: this.o.llm.modelFor(job.model_role) });
    return recorder.wrap(replayer.seams(direct));
  }
}
