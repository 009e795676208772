import { ToolArgumentError } from './toolbus-errors.js';
import { addMonths, formatClock, instantOf, parseDateInput, WEEKDAYS } from './date-input.js';
import type { BuiltinTool } from './tool-types.js';

const DATE_ARG = {
  type: 'string',
  format: 'date-or-date-time',
  description: 'A date "YYYY-MM-DD" or an ISO 8601 date-time such as "2025-03-01T09:30:00+01:00" (no offset means UTC).',
};

/** The current time; lets a model answer "what day is it" without guessing from its training data. */
export const timeNowTool: BuiltinTool = {
  spec: {
    name: 'time_now',
    description: 'Returns the current date and time: the UTC instant, and the wall-clock time, offset and weekday in the given IANA time zone (default UTC).',
    parameters: {
      type: 'object',
      properties: {
        timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone name, e.g. "Europe/Paris". Defaults to UTC.' },
      },
      additionalProperties: false,
    },
    timeout_ms: 1000,
  },
  async run(args) {
    const timezone = typeof args.timezone === 'string' ? args.timezone : 'UTC';
    const now = Date.now();
    const offsetMinutes = offsetIn(timezone, now);
    const clock = Math.floor(now / 1000) * 1000 + offsetMinutes * 60_000;
    return {
      utc: new Date(now).toISOString(),
      timezone,
      local: formatClock(clock, offsetMinutes, false),
      weekday: WEEKDAYS[new Date(clock).getUTCDay()],
    };
  },
};

/** Calendar arithmetic models get wrong when they do it in their head. */
export const dateAddTool: BuiltinTool = {
  spec: {
    name: 'date_add',
    description:
      'Adds (or, with negative amounts, subtracts) months, days, hours and minutes to a date or date-time and returns the result in the same style. Months keep the day within the month (Jan 31 + 1 month = Feb 28/29).',
    parameters: {
      type: 'object',
      properties: {
        date: DATE_ARG,
        months: { type: 'integer', minimum: -12_000, maximum: 12_000 },
        days: { type: 'integer', minimum: -3_650_000, maximum: 3_650_000 },
        hours: { type: 'integer', minimum: -87_600_000, maximum: 87_600_000 },
        minutes: { type: 'integer', minimum: -5_256_000_000, maximum: 5_256_000_000 },
      },
      required: ['date'],
      additionalProperties: false,
    },
    timeout_ms: 1000,
    idempotent: true,
  },
  async run(args) {
    const input = parseDateInput(String(args.date), '/date');
    const [months, days, hours, minutes] = (['months', 'days', 'hours', 'minutes'] as const).map((k) =>
      typeof args[k] === 'number' ? (args[k] as number) : 0,
    );
    let clock = addMonths(input.clockMs, months ?? 0);
    clock += (days ?? 0) * 86_400_000 + (hours ?? 0) * 3_600_000 + (minutes ?? 0) * 60_000;
    const dateOnly = input.dateOnly && !hours && !minutes;
    if (Number.isNaN(new Date(clock).getTime())) throw new ToolArgumentError([{ path: '', message: 'the result is outside the supported date range' }]);
    return { date: formatClock(clock, input.offsetMinutes, dateOnly), weekday: WEEKDAYS[new Date(clock).getUTCDay()] };
  },
};

/** The time between two dates, in the units people ask for. */
export const dateDiffTool: BuiltinTool = {
  spec: {
    name: 'date_diff',
    description:
      'Returns how long it is from one date or date-time to another: whole days, hours and minutes, and the totals in each unit. Negative when "to" is before "from".',
    parameters: {
      type: 'object',
      properties: { from: DATE_ARG, to: DATE_ARG },
      required: ['from', 'to'],
      additionalProperties: false,
    },
    timeout_ms: 1000,
    idempotent: true,
  },
  async run(args) {
    const diffMs = instantOf(parseDateInput(String(args.to), '/to')) - instantOf(parseDateInput(String(args.from), '/from'));
    const sign = diffMs < 0 ? -1 : 1;
    const totalMinutes = Math.trunc(Math.abs(diffMs) / 60_000);
    const zeroSafe = (n: number) => (n === 0 ? 0 : sign * n);
    return {
      days: zeroSafe(Math.floor(totalMinutes / 1440)),
      hours: zeroSafe(Math.floor((totalMinutes % 1440) / 60)),
      minutes: zeroSafe(totalMinutes % 60),
      total_days: Math.round((diffMs / 86_400_000) * 10_000) / 10_000,
      total_hours: Math.round((diffMs / 3_600_000) * 100) / 100,
      total_minutes: zeroSafe(totalMinutes),
    };
  },
};

/** Minutes east of UTC of a time zone at an instant; an unknown zone is the model's mistake. */
function offsetIn(timezone: string, at: number): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    }).formatToParts(at);
  } catch {
    throw new ToolArgumentError([
      { path: '/timezone', message: 'is not a known IANA time zone', expected: 'string (IANA time zone, e.g. "Europe/Paris")', got: JSON.stringify(timezone) },
    ]);
  }
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const clock = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  return Math.round((clock - Math.floor(at / 1000) * 1000) / 60_000);
}
