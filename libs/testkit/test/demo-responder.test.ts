import { describe, expect, it } from 'vitest';
import { demoResponder, type RecordedRequest, type ScriptedContent } from '../src/index.js';

const ask = (messages: { role: string; content: string }[]) =>
  demoResponder({ body: { model: 'demo', messages }, headers: {}, receivedAt: 0 } as unknown as RecordedRequest) as ScriptedContent;

describe('demoResponder (the offline demo model of npm run up)', () => {
  it("answers a planner's request with a one-subtask plan for the goal", () => {
    const answer = ask([
      { role: 'system', content: 'You are the Hermes planner.\nGoal to plan: Say hello\nAnswer with ONLY one JSON object' },
      { role: 'user', content: 'Say hello' },
    ]);
    expect(JSON.parse(answer.content)).toEqual({ subtasks: [{ id: 'answer', intent: 'Say hello', depends_on: [] }] });
  });

  it("answers the memory judge with the user's first-person preferences and facts, nothing else", () => {
    const answer = ask([
      { role: 'system', content: 'You decide what to remember.\nAnswer with JSON only: {"memories": [{"type": "preference", "content": "..."}]}' },
      {
        role: 'user',
        content:
          'Memories already held about this user:\n(none)\n\nNew messages:\n' +
          '[2026-11-30T10:00:00.000Z] user: I always drink green tea. What is the weather like? I work on the billing team.\n' +
          '[2026-11-30T10:00:01.000Z] assistant: I prefer to answer briefly.',
      },
    ]);
    expect(JSON.parse(answer.content)).toEqual({
      memories: [
        { type: 'preference', content: 'The user said: "I always drink green tea."', confidence: 0.8 },
        { type: 'fact', content: 'The user said: "I work on the billing team."', confidence: 0.8 },
      ],
    });
  });

  it('answers anything else in words, echoing only the first line of what was said', () => {
    const answer = ask([{ role: 'user', content: 'Say hello\n\nInputs (JSON):\n{"task_goal":"Say hello"}' }]);
    expect(answer.content).toContain('You said: "Say hello".');
    expect(answer.content).not.toContain('Inputs');
  });
});
