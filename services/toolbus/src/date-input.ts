import { ToolArgumentError } from './toolbus-errors.js';

/** A date or date-time as written, kept on its own wall clock so calendar arithmetic stays natural. */
export interface DateInput {
  /** The wall-clock reading, encoded as if it were UTC. */
  clockMs: number;
  /** Minutes east of UTC (0 for `Z`, for no offset, and for a plain date). */
  offsetMinutes: number;
  dateOnly: boolean;
}

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

/** Parses `YYYY-MM-DD` or an ISO 8601 date-time; `path` names the argument in the error. */
export function parseDateInput(text: string, path: string): DateInput {
  const m = PATTERN.exec(text);
  if (!m) throw invalid(path, text);
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const ms = frac ? Math.round(Number(`0${frac}`) * 1000) : 0;
  const clockMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), ms);
  const check = new Date(clockMs);
  if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1 || Number(h ?? 0) > 23 || Number(mi ?? 0) > 59 || Number(s ?? 0) > 59) {
    throw invalid(path, text);
  }
  let offsetMinutes = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  }
  return { clockMs, offsetMinutes, dateOnly: h === undefined };
}

/** The instant a date input stands for (a plain date is midnight UTC). */
export function instantOf(input: DateInput): number {
  return input.clockMs - input.offsetMinutes * 60_000;
}

/** Formats a wall-clock reading back in the input's style: a plain date, or a date-time with its offset. */
export function formatClock(clockMs: number, offsetMinutes: number, dateOnly: boolean): string {
  const iso = new Date(clockMs).toISOString();
  if (dateOnly) return iso.slice(0, 10);
  const body = iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
  if (offsetMinutes === 0) return `${body}Z`;
  const abs = Math.abs(offsetMinutes);
  return `${body}${offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** Adds calendar months, keeping the day within the target month (Jan 31 + 1 month = Feb 28/29). */
export function addMonths(clockMs: number, months: number): number {
  const d = new Date(clockMs);
  const target = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), target + 1, 0)).getUTCDate();
  return Date.UTC(d.getUTCFullYear(), target, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

function invalid(path: string, text: string): ToolArgumentError {
  return new ToolArgumentError([
    { path, message: 'is not a real calendar date', expected: 'string (YYYY-MM-DD or an ISO 8601 date-time)', got: JSON.stringify(text) },
  ]);
}
