import { describe, expect, it } from 'vitest';
import { MAX_CATCH_UP_FIRINGS, type MissedFirings, type Schedule } from '@hermes/contracts';
import { dueFirings, nextFireAt, scheduleProblem } from '../src/schedule-clock.js';

const schedule = (o: Partial<Schedule> & { missed: MissedFirings }): Schedule => ({
  v: 1,
  schedule_id: 'every-10s',
  team: 'default',
  user_id: 'alice',
  cron: '*/10 * * * * *',
  timezone: 'UTC',
  task: { goal: 'tick' },
  paused: false,
  created_at: '2026-12-01T00:00:00.000Z',
  updated_at: '2026-12-01T00:00:00.000Z',
  fired_through: '2026-12-01T00:00:00.000Z',
  firings: 0,
  ...o,
});
const at = (iso: string) => new Date(`2026-12-01T${iso}Z`);
const isoOf = (d?: { fire: Date[] }) => d?.fire.map((t) => t.toISOString().slice(11, 19));

describe('dueFirings', () => {
  it('fires an on-time firing under every policy, once, and nothing before its time', () => {
    for (const missed of ['skip', 'run_once', 'catch_up'] as const) {
      expect(dueFirings(schedule({ missed }), at('00:00:09.999'), 1000)).toBeUndefined();
      const due = dueFirings(schedule({ missed }), at('00:00:10.300'), 1000);
      expect(isoOf(due)).toEqual(['00:00:10']);
      expect(due?.through.toISOString()).toBe('2026-12-01T00:00:10.000Z');
      // Once fired through 00:00:10, the same tick is not due again.
      expect(dueFirings(schedule({ missed, fired_through: '2026-12-01T00:00:10.000Z' }), at('00:00:10.900'), 1000)).toBeUndefined();
    }
  });

  it('after an outage: skip drops the missed firings, run_once fires one for all of them, catch_up fires each', () => {
    const now = at('00:00:45'); // 10, 20, 30 and 40 fell due; 40 is 5 s late, past a 1 s grace
    expect(dueFirings(schedule({ missed: 'skip' }), now, 1000)).toMatchObject({ fire: [], skipped: 4 });
    expect(isoOf(dueFirings(schedule({ missed: 'run_once' }), now, 1000))).toEqual(['00:00:40']);
    expect(isoOf(dueFirings(schedule({ missed: 'catch_up' }), now, 1000))).toEqual(['00:00:10', '00:00:20', '00:00:30', '00:00:40']);
    for (const missed of ['skip', 'run_once', 'catch_up'] as const)
      expect(dueFirings(schedule({ missed }), now, 1000)?.through.toISOString()).toBe('2026-12-01T00:00:40.000Z');
  });

  it('counts a late firing within the grace as on time, so a short outage loses nothing even under skip', () => {
    expect(isoOf(dueFirings(schedule({ missed: 'skip' }), at('00:00:45'), 60_000))).toEqual(['00:00:10', '00:00:20', '00:00:30', '00:00:40']);
    // run_once with an on-time firing: that firing is the once.
    expect(isoOf(dueFirings(schedule({ missed: 'run_once' }), at('00:00:40.500'), 1000))).toEqual(['00:00:40']);
  });

  it('catches up on at most MAX_CATCH_UP_FIRINGS, the latest ones, and says how many it dropped', () => {
    const due = dueFirings(schedule({ missed: 'catch_up' }), at('01:00:05'), 1000); // 360 fire times in the hour
    expect(due?.fire).toHaveLength(MAX_CATCH_UP_FIRINGS);
    expect(due?.fire.at(-1)?.toISOString()).toBe('2026-12-01T01:00:00.000Z');
    expect(due?.skipped).toBe(360 - MAX_CATCH_UP_FIRINGS);
  });

  it('fires nothing while paused and has no next fire time', () => {
    expect(dueFirings(schedule({ missed: 'catch_up', paused: true }), at('00:05:00'), 1000)).toBeUndefined();
    expect(nextFireAt(schedule({ missed: 'skip', paused: true }), at('00:00:00'))).toBeUndefined();
  });

  it('reads the expression in the schedule’s time zone', () => {
    const daily = schedule({ missed: 'skip', cron: '0 7 * * *', timezone: 'Europe/Berlin' });
    // 07:00 in Berlin in December is 06:00 UTC.
    expect(nextFireAt(daily, at('00:00:00'))?.toISOString()).toBe('2026-12-01T06:00:00.000Z');
  });
});

describe('scheduleProblem', () => {
  it('refuses an unreadable expression, an unknown time zone and one that never fires, as the caller’s invalid_schedule', () => {
    expect(scheduleProblem('*/10 * * * * *', 'UTC')).toBeUndefined();
    expect(scheduleProblem('every morning', 'UTC')).toMatchObject({ code: 'invalid_schedule', retryable: false });
    expect(scheduleProblem('0 7 * * *', 'Mars/Olympus')).toMatchObject({ code: 'invalid_schedule' });
    expect(scheduleProblem('0 0 30 2 *', 'UTC')).toMatchObject({ code: 'invalid_schedule', message: expect.stringContaining('never fires') });
  });
});
