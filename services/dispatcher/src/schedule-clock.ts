import { Cron } from 'croner';
import { MAX_CATCH_UP_FIRINGS, wireError, type Schedule, type WireError } from '@hermes/contracts';

/** A cron expression read in a time zone; never started (croner's own timers are not used). */
function cronOf(expr: string, timezone: string): Cron {
  return new Cron(expr, { timezone, paused: true });
}

/**
 * Why an expression or time zone cannot be used, as the caller's error (`invalid_schedule`), or
 * undefined. An expression that never fires (e.g. 30 February) is refused too.
 */
export function scheduleProblem(expr: string, timezone: string): WireError | undefined {
  let next: Date | null;
  try {
    // croner reads the time zone only when it computes a time: both can throw.
    next = cronOf(expr, timezone).nextRun();
  } catch (err) {
    return wireError('invalid_schedule', `cron "${expr}" in time zone ${timezone} cannot be read: ${(err as Error).message}`, { cron: expr, timezone });
  }
  if (!next) return wireError('invalid_schedule', `cron "${expr}" never fires`, { cron: expr, timezone });
  return undefined;
}

/** The schedule's next fire time after `after` (none while paused). */
export function nextFireAt(s: Schedule, after: Date): Date | undefined {
  if (s.paused) return undefined;
  return cronOf(s.cron, s.timezone).nextRun(after) ?? undefined;
}

/** What a tick does for one schedule: the fire times to start a task for, and how far it has then fired. */
export interface DueFirings {
  fire: Date[];
  through: Date;
  /** Fire times that passed while nobody fired them and the policy dropped. */
  skipped: number;
}

/**
 * The firings due at `now`: the fire times after `fired_through` up to now. One at most `onTimeMs`
 * late is on time and always fires; later ones were missed (every dispatcher was down or paused)
 * and the schedule's policy decides: `skip` drops them, `run_once` fires once for all of them (an
 * on-time firing, if there is one, is that once; otherwise the latest missed time fires),
 * `catch_up` fires each (the latest MAX_CATCH_UP_FIRINGS).
 */
export function dueFirings(s: Schedule, now: Date, onTimeMs: number): DueFirings | undefined {
  if (s.paused) return undefined;
  const cron = cronOf(s.cron, s.timezone);
  const times: Date[] = [];
  let dropped = 0;
  for (let t = cron.nextRun(new Date(s.fired_through)); t && t.getTime() <= now.getTime(); t = cron.nextRun(t)) {
    times.push(t);
    // Bounded memory for a schedule that was away long: only the latest ones can fire.
    if (times.length > MAX_CATCH_UP_FIRINGS) {
      times.shift();
      dropped++;
    }
  }
  const latest = times.at(-1);
  if (!latest) return undefined;
  const onTime = times.filter((t) => now.getTime() - t.getTime() <= onTimeMs);
  const fire = s.missed === 'catch_up' ? times : s.missed === 'run_once' && onTime.length === 0 ? [latest] : onTime;
  return { fire, through: latest, skipped: dropped + times.length - fire.length };
}
