import { Type, type Static } from '@sinclair/typebox';
import { Id } from './common.js';
import { TaskBudget } from './task-submission.js';
import { ScriptTurn } from './recordings.js';

/** How one argument of an expected tool call is matched: equal to a value, containing text, a regex, or present at all. */
export const ArgumentMatcher = Type.Union(
  [
    Type.Object({ equals: Type.Unknown() }, { additionalProperties: false }),
    Type.Object({ contains: Type.String() }, { additionalProperties: false }),
    Type.Object({ regex: Type.String() }, { additionalProperties: false }),
    Type.Object({ present: Type.Boolean() }, { additionalProperties: false }),
  ],
  { title: 'ArgumentMatcher' },
);
export type ArgumentMatcher = Static<typeof ArgumentMatcher>;

/** What one case is graded by; each grader passes or fails on its own, the case passes when all do. */
export const EvalGrader = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('tool_calls'),
        expect: Type.Array(
          Type.Object(
            { name: Type.String({ minLength: 1 }), arguments: Type.Optional(Type.Record(Type.String(), ArgumentMatcher)), ok: Type.Optional(Type.Boolean()) },
            { additionalProperties: false },
          ),
        ),
        ordered: Type.Optional(Type.Boolean({ description: 'the expected calls appear in this order (default: any order)' })),
        forbid: Type.Optional(Type.Array(Type.String(), { description: 'tools that must not be called successfully' })),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('final_answer'),
        contains: Type.Optional(Type.Array(Type.String())),
        not_contains: Type.Optional(Type.Array(Type.String())),
        regex: Type.Optional(Type.String()),
        json_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('llm_judge'),
        rubric: Type.String({ minLength: 1 }),
        // The judge is a Hermes task itself (so through the global semaphore); offline it answers from this script.
        script: Type.Optional(Type.Array(ScriptTurn)),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('limits'),
        max_steps: Type.Optional(Type.Integer({ minimum: 1 })),
        max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('outcome'), status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]) }, { additionalProperties: false }),
  ],
  { title: 'EvalGrader' },
);
export type EvalGrader = Static<typeof EvalGrader>;

/** A task run before the case in the same user's account (memory across sessions, say). */
export const EvalSetupTask = Type.Object(
  {
    goal: Type.String({ minLength: 1 }),
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tools: Type.Optional(Type.Array(Type.String())),
    script: Type.Optional(Type.Array(ScriptTurn)),
  },
  { title: 'EvalSetupTask', additionalProperties: false },
);

/** One case of a suite. */
export const EvalCase = Type.Object(
  {
    id: Id,
    description: Type.Optional(Type.String()),
    goal: Type.String({ minLength: 1 }),
    inputs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tools: Type.Optional(Type.Array(Type.String(), { description: 'tools offered (the allow-list); absent: all the user may use' })),
    budget: Type.Optional(TaskBudget),
    setup: Type.Optional(Type.Array(EvalSetupTask)),
    model: Type.Optional(
      Type.Union([
        Type.Object({ script: Type.Array(ScriptTurn, { minItems: 1 }) }, { additionalProperties: false }),
        Type.Object({ recording: Id, tools: Type.Optional(Type.Union([Type.Literal('recorded'), Type.Literal('live')])) }, { additionalProperties: false }),
      ]),
    ),
    graders: Type.Array(EvalGrader, { minItems: 1 }),
  },
  { title: 'EvalCase', additionalProperties: false },
);
export type EvalCase = Static<typeof EvalCase>;

/** A suite file (YAML): cases and how they run. */
export const EvalSuite = Type.Object(
  {
    suite: Id,
    description: Type.Optional(Type.String()),
    /** Price per million tokens, for the cost column. */
    cost_per_million_tokens: Type.Optional(
      Type.Object({ input: Type.Number({ minimum: 0 }), output: Type.Number({ minimum: 0 }) }, { additionalProperties: false }),
    ),
    cases: Type.Array(EvalCase, { minItems: 1 }),
  },
  { title: 'EvalSuite', additionalProperties: false },
);
export type EvalSuite = Static<typeof EvalSuite>;

/** One grader's verdict. */
export const GraderResult = Type.Object(
  { grader: Type.String(), passed: Type.Boolean(), detail: Type.String() },
  { title: 'GraderResult', additionalProperties: false },
);
export type GraderResult = Static<typeof GraderResult>;

/** One case's outcome in results.json. */
export const EvalCaseResult = Type.Object(
  {
    id: Id,
    task_id: Id,
    passed: Type.Boolean(),
    status: Type.String(),
    error_code: Type.Optional(Type.String()),
    final_answer: Type.Optional(Type.String()),
    tool_calls: Type.Array(
      Type.Object({ step: Type.Integer(), name: Type.String(), arguments: Type.String(), ok: Type.Boolean() }, { additionalProperties: false }),
    ),
    steps: Type.Integer({ minimum: 0 }),
    tokens: Type.Object({ input: Type.Integer({ minimum: 0 }), output: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    latency_ms: Type.Number({ minimum: 0 }),
    cost: Type.Optional(Type.Number({ minimum: 0 })),
    graders: Type.Array(GraderResult),
  },
  { title: 'EvalCaseResult', additionalProperties: false },
);
export type EvalCaseResult = Static<typeof EvalCaseResult>;

/** What `hermes eval` writes (results.json, version 1). */
export const EvalResults = Type.Object(
  {
    version: Type.Literal(1),
    suite: Id,
    started_at: Type.String(),
    pass_rate: Type.Number({ minimum: 0, maximum: 1 }),
    cases: Type.Array(EvalCaseResult),
  },
  { title: 'EvalResults', additionalProperties: false },
);
export type EvalResults = Static<typeof EvalResults>;
