import { contracts, type RuntimeJob } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';

/** The ids of the subtasks a planned subtask depends on (set by the dispatcher in its inputs). */
function dependencyIds(job: RuntimeJob): string[] {
  const deps = job.inputs?.depends_on;
  return Array.isArray(deps) ? deps.filter((d): d is string => typeof d === 'string') : [];
}

/**
 * A planned subtask reads what the subtasks it depends on produced from the task's working
 * memory (memory service) and gets it as `dependencies` in its inputs.
 */
export async function withDependencyOutputs(bus: Bus, job: RuntimeJob): Promise<RuntimeJob> {
  const ids = dependencyIds(job);
  if (ids.length === 0) return job;
  const { entries } = await request(bus, contracts.workingGet, { user_id: job.user_id, task_id: job.task_id });
  const outputs = Object.fromEntries(ids.map((id) => [id, entries.find((e) => e.subtask_id === id && e.key === 'output')?.value ?? null]));
  return { ...job, inputs: { ...job.inputs, dependencies: outputs } };
}

/** A planned subtask leaves its output in the task's working memory for the subtasks after it. */
export async function recordSubtaskOutput(bus: Bus, job: RuntimeJob, output: string): Promise<void> {
  // Single-step tasks (subtask `main`) have no dependents.
  if (job.subtask_id === 'main') return;
  await request(bus, contracts.workingSet, {
    user_id: job.user_id,
    task_id: job.task_id,
    entries: [{ subtask_id: job.subtask_id, key: 'output', value: output }],
  });
}
