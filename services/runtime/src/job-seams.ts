import type { RuntimeJob } from '@hermes/contracts';
import { readRecording, type Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import { JobRecorder } from './job-recorder.js';
import { JobReplayer } from './job-replayer.js';
import type { JobSeams } from './model-seam.js';
import { shouldRecord, type RecordingPolicy } from './recording-policy.js';

/**
 * Picks each job's seams to the model and the tools: the LLM client and the toolbus as they are,
 * with a recorder in front when the job is recorded, and a replayer (the replay-mode pool) when
 * the task replays a recording or a script.
 */
export class JobSeamFactory {
  constructor(private readonly o: { bus: Bus; policy: RecordingPolicy }) {}

  /** `direct` is the runner's own LLM client and tool caller (whatever a test handed it). */
  async forJob(job: RuntimeJob, logger: Logger, direct: JobSeams): Promise<JobSeams> {
    if (!shouldRecord(this.o.policy, job)) return direct;
    const recorder = new JobRecorder({ bus: this.o.bus, job, logger });
    if (!job.replay) return recorder.wrap(direct);
    const entries = await readRecording(this.o.bus, job.replay.source_task);
    const replayer = new JobReplayer({ source: job.replay, entries, recorder, subtaskId: job.subtask_id, model: direct.llm.modelFor(job.model_role) });
    return recorder.wrap(replayer.seams(direct));
  }
}
