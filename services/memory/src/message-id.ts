import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/**
 * A unique id that sorts in creation order within this process: `m_`, the time in ms and a
 * per-millisecond counter (both fixed-width base36, so string order is time order), then
 * random characters so replicas creating ids in the same millisecond do not collide.
 */
export function newMessageId(now = Date.now()): string {
  if (now === lastMs) {
    seq += 1;
  } else {
    lastMs = now;
    seq = 0;
  }
  const time = now.toString(36).padStart(9, '0');
  const counter = (seq % 36 ** 3).toString(36).padStart(3, '0');
  return `m_${time}${counter}${randomBytes(6).toString('hex')}`;
}
