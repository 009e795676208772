import { DEFAULT_TEAM, type RuntimeJob } from '@hermes/contracts';

/** Who is recorded besides tasks that ask for it (RECORDING, RECORDING_USERS). */
export interface RecordingPolicy {
  /** `all`: every task unless it says `record: false`; `opt-in` (the default): only tasks and users that ask. */
  mode: 'opt-in' | 'all';
  /** Users recorded whatever their tasks say, as `user` (default team) or `team/user`. */
  users: ReadonlySet<string>;
}

/** Reads RECORDING_USERS: a comma-separated list, blanks ignored. */
export function recordingPolicy(o: { mode: 'opt-in' | 'all'; users: string }): RecordingPolicy {
  return {
    mode: o.mode,
    users: new Set(
      o.users
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
    ),
  };
}

/**
 * Whether a job is recorded. Recording stores what users and models said, so it is off unless
 * asked for: by the task (`record: true`), for its user, or globally; a task's `record: false`
 * opts out of the global setting. A replay is always recorded: its report compares recordings.
 */
export function shouldRecord(policy: RecordingPolicy, job: Pick<RuntimeJob, 'record' | 'replay' | 'team' | 'user_id'>): boolean {
  if (job.replay) return true;
  if (job.record !== undefined) return job.record;
  if (policy.mode === 'all') return true;
  const team = job.team ?? DEFAULT_TEAM;
  // A bare user id names a user of the default team only: the same id in another team is someone else.
  return policy.users.has(`${team}/${job.user_id}`) || (team === DEFAULT_TEAM && policy.users.has(job.user_id));
}
