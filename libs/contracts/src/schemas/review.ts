import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.js';

/** The reviewer's notes on one subtask it sends back. */
export const ReviewNote = Type.Object(
  { id: Id, notes: Type.String({ minLength: 1, maxLength: 8000, description: 'what the subtask must change in its next attempt' }) },
  { title: 'ReviewNote', additionalProperties: false },
);
export type ReviewNote = Static<typeof ReviewNote>;

/**
 * What a reviewer job answers (docs/planning.md#review): accept with the merged answer, or send
 * named subtasks back with notes. The dispatcher also checks that every named id is a subtask.
 */
export const ReviewVerdict = Type.Union(
  [
    Type.Object({ verdict: Type.Literal('accept'), answer: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
    Type.Object({ verdict: Type.Literal('revise'), subtasks: Type.Array(ReviewNote, { minItems: 1 }) }, { additionalProperties: false }),
  ],
  { title: 'ReviewVerdict' },
);
export type ReviewVerdict = Static<typeof ReviewVerdict>;

/** How a task's review ended, in its result. */
export const ReviewOutcome = Type.Object(
  {
    accepted: Type.Boolean({ description: 'false: the review rounds ran out and the last outputs were composed' }),
    rounds: Type.Integer({ minimum: 1, description: 'reviews held' }),
    notes: Type.Optional(Type.Array(ReviewNote, { description: "not accepted: the last verdict's notes" })),
  },
  { title: 'ReviewOutcome', additionalProperties: false },
);
export type ReviewOutcome = Static<typeof ReviewOutcome>;

/** Review rounds a task may ask for (`review_rounds`): how often the reviewer may send subtasks back. */
export const MAX_REVIEW_ROUNDS = 3;
