import { describe, expect, it } from 'vitest';
import { parseJudgeAnswer } from '../src/longterm/extraction-prompt.js';
import { backoffMs } from '../src/longterm/longterm-handlers.js';
import { recallScore, renderBackground } from '../src/longterm/recall.js';

const DAY = 86_400_000;
const tuning = { halfLifeDays: 30, recencyWeight: 0.3 };

describe('recallScore', () => {
  it('is the similarity for a memory learnt just now, and loses half the recency share per half-life', () => {
    expect(recallScore(0.8, 0, tuning)).toBeCloseTo(0.8);
    expect(recallScore(0.8, 30 * DAY, tuning)).toBeCloseTo(0.8 * (0.7 + 0.3 * 0.5));
    expect(recallScore(0.8, 60 * DAY, tuning)).toBeCloseTo(0.8 * (0.7 + 0.3 * 0.25));
  });

  it('never takes more than the recency weight away, so a clearly related old memory still beats an unrelated new one', () => {
    const yearOld = recallScore(0.9, 365 * DAY, tuning);
    expect(yearOld).toBeGreaterThan(0.9 * 0.7 - 1e-9);
    expect(yearOld).toBeGreaterThan(recallScore(0.3, 0, tuning));
  });

  it('prefers the newer of two equally similar memories, and ignores recency with weight 0', () => {
    expect(recallScore(0.6, 1 * DAY, tuning)).toBeGreaterThan(recallScore(0.6, 90 * DAY, tuning));
    expect(recallScore(0.6, 900 * DAY, { ...tuning, recencyWeight: 0 })).toBe(0.6);
  });
});

describe('renderBackground', () => {
  it('shows each memory with the date it was learnt, its type and its confidence; nothing when there are none', () => {
    const text = renderBackground([
      {
        memory_id: 'm_1',
        user_id: 'u',
        type: 'fact',
        content: 'The user is on the billing team.',
        confidence: 0.8,
        status: 'active',
        created_at: '2026-10-02T09:00:00.000Z',
        updated_at: '2026-10-02T09:00:00.000Z',
      },
    ]);
    expect(text.split('\n')).toEqual([expect.stringMatching(/^Background: /), '- (2026-10-02, fact, confidence 0.80) The user is on the billing team.']);
    expect(renderBackground([])).toBe('');
  });

  it('says where a memory came from when that is known: a tool result names its tool', () => {
    const base = {
      user_id: 'u',
      type: 'fact',
      confidence: 1,
      status: 'active',
      created_at: '2026-10-02T09:00:00.000Z',
      updated_at: '2026-10-02T09:00:00.000Z',
    } as const;
    const text = renderBackground([
      { ...base, memory_id: 'm_1', content: 'The user banks with EvilBank.', provenance: { kind: 'tool_result', tools: ['read_page'], task_id: 't_1' } },
      { ...base, memory_id: 'm_2', content: 'The user likes tea.', provenance: { kind: 'model', task_id: 't_2' } },
    ]);
    expect(text.split('\n').slice(1)).toEqual([
      '- (2026-10-02, fact, confidence 1.00, from tool_result:read_page) The user banks with EvilBank.',
      '- (2026-10-02, fact, confidence 1.00, from model) The user likes tea.',
    ]);
  });
});

describe('parseJudgeAnswer', () => {
  it('reads the JSON object out of fences or prose', () => {
    const parsed = parseJudgeAnswer(
      'Here you go:\n```json\n{"memories": [{"type": "preference", "content": "The user likes vim.", "confidence": 0.8, "supersedes": null}]}\n```',
    );
    expect(parsed).toEqual({ ok: true, answer: { memories: [{ type: 'preference', content: 'The user likes vim.', confidence: 0.8, supersedes: null }] } });
  });

  it('refuses text without JSON, broken JSON and a wrong shape, saying why', () => {
    expect(parseJudgeAnswer('no memories today')).toMatchObject({ ok: false, issues: [{ message: 'no JSON object in the answer' }] });
    expect(parseJudgeAnswer('{"memories": [}')).toMatchObject({ ok: false, issues: [{ message: expect.stringMatching(/^not JSON/) }] });
    const wrong = parseJudgeAnswer('{"memories": [{"type": "opinion", "content": "x", "confidence": 2}]}');
    expect(wrong.ok).toBe(false);
    expect(wrong.ok ? [] : wrong.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['/memories/0/type', '/memories/0/confidence']));
  });
});

describe('backoffMs', () => {
  it('doubles from half a second per delivery up to the cap', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(30)).toBe(60_000);
    expect(backoffMs(5, 3000)).toBe(3000);
  });
});
