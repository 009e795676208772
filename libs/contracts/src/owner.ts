import { Type } from '@sinclair/typebox';

/**
 * The team every record without one belongs to: tasks, sessions and memories written before
 * owners carried a team, HTTP users whose API key names none, and Hermes' own submitters.
 */
export const DEFAULT_TEAM = 'default';

/** A team name: one NATS subject token and one NATS account suffix (lower case, digits, `-`). */
export const Team = Type.String({
  minLength: 1,
  maxLength: 32,
  pattern: '^[a-z0-9][a-z0-9-]*$',
  description: 'the team the user belongs to; set by Hermes from where a request came (the submit subject, the API key), never by the caller',
});

const TEAM_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** Whether `name` may be a team (a subject token without `.`, `*`, `>`, and a NATS account suffix). */
export function isTeamName(name: string): boolean {
  return TEAM_PATTERN.test(name);
}

/** Whose task, session or memory it is: a user id means something only inside its team. */
export interface Owner {
  readonly team: string;
  readonly user_id: string;
}

/** The owner of a record or request that may predate teams (no `team`: the default team). */
export function ownerOf(record: { readonly team?: string | undefined; readonly user_id: string }): Owner {
  return { team: record.team ?? DEFAULT_TEAM, user_id: record.user_id };
}

/** `{ team }` to write into a record: nothing for the default team, so records of the release before stay byte-identical. */
export function teamField(team: string): { team?: string } {
  return team === DEFAULT_TEAM ? {} : { team };
}

/**
 * One string per owner, for keys of stores that know only users (Redis keys, vector-store
 * namespaces, role tables): the bare user id in the default team — what those stores held before
 * teams, so old records read as the default team's — and `<team>/<user>` in any other. `/` is
 * in no user id, so two owners never share a key.
 */
export function ownerKey(owner: Owner): string {
  return owner.team === DEFAULT_TEAM ? owner.user_id : `${owner.team}/${owner.user_id}`;
}

/** Whether two owners are the same user (same team and same user id). */
export function sameOwner(a: Owner, b: Owner): boolean {
  return a.team === b.team && a.user_id === b.user_id;
}

/**
 * The team a message was sent for, read from its subject: `<base>.<team>` is that team's (inside
 * the HERMES account a team's account can only reach its own, see docs/deploy.md); the bare
 * `<base>` is the default team's. Undefined for any other subject.
 */
export function teamOfSubject(subject: string, base: string): string | undefined {
  if (subject === base) return DEFAULT_TEAM;
  if (!subject.startsWith(`${base}.`)) return undefined;
  const team = subject.slice(base.length + 1);
  return isTeamName(team) ? team : undefined;
}

/** `user_id` and (outside the default team) `team` of a job or record, for a request made on its owner's behalf. */
export function ownerFields(record: { readonly team?: string | undefined; readonly user_id: string }): { user_id: string; team?: string } {
  const owner = ownerOf(record);
  return { user_id: owner.user_id, ...teamField(owner.team) };
}

/** The owner an {@link ownerKey} names (its inverse): a key without `/` is a user of the default team. */
export function ownerFromKey(key: string): Owner {
  const at = key.indexOf('/');
  return at < 0 ? { team: DEFAULT_TEAM, user_id: key } : { team: key.slice(0, at), user_id: key.slice(at + 1) };
}
