import { ownerOf, sameOwner, type TaskView } from '@hermes/contracts';

/**
 * Whether a task may be shown to a request: of `team` when it came on a team's subject (a task of
 * another team is not found, exactly like a missing one), and of `userId` when that is set.
 */
export function visibleTo(view: TaskView, userId: string | null | undefined, team: string | undefined): boolean {
  const owner = ownerOf(view);
  if (team !== undefined && owner.team !== team) return false;
  return !userId || sameOwner(owner, { team: owner.team, user_id: userId });
}
