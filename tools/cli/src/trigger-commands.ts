import { TriggerSpec, contracts, type Trigger } from '@hermes/contracts';
import { UsageError, stringOption, type Command } from './command.js';
import { ownedCommands } from './owned-commands.js';

/** `hermes trigger create|list|show|pause|resume|delete`: a user's triggers on the team's events (docs/schedules.md). */
export const TRIGGER_COMMANDS: readonly Command[] = ownedCommands<Trigger>({
  kind: 'trigger',
  spec: TriggerSpec,
  specHint: '--subject and --goal are required',
  createOptions: {
    subject: { type: 'string', valueName: 'filter', description: "subject filter relative to the team's events, e.g. orders.* (required)" },
    goal: { type: 'string', valueName: 'text', description: 'the goal of each task; {{/json/pointer}} takes a field of the event (required)' },
    condition: { type: 'string', valueName: 'json', description: 'condition on the event payload, e.g. {"field":"/total","op":"gt","value":100}' },
  },
  specOf(values) {
    const condition = stringOption(values, 'condition');
    return {
      subject: stringOption(values, 'subject'),
      task: { goal: stringOption(values, 'goal') },
      ...(condition ? { condition: parseCondition(condition) } : {}),
    };
  },
  header: ['TRIGGER', 'SUBJECT', 'CONDITION', 'STATE', 'FIRINGS', 'LAST FIRED', 'LAST TASK'],
  row: (t) => [
    t.trigger_id,
    t.subject,
    t.condition ? 'yes' : '-',
    t.paused ? 'paused' : 'active',
    String(t.firings),
    t.last_fire_at ?? '-',
    t.last_task_id ?? '-',
  ],
  create: contracts.triggerCreate,
  get: contracts.triggerGet,
  list: contracts.triggerList,
  update: contracts.triggerUpdate,
  remove: contracts.triggerDelete,
  summaries: {
    create: "create a trigger: a subject filter on the team's events, an optional condition and the task each matching event starts",
    list: "list a user's triggers with their firings",
    show: 'print one trigger',
    pause: 'pause a trigger: matching events start nothing until resumed',
    resume: 'resume a trigger: matching events start tasks again',
    delete: 'delete a trigger (the tasks it started stay)',
  },
});

// The condition's shape is checked with the spec; here only that it is JSON at all.
function parseCondition(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--condition is not JSON: ${text}`);
  }
}
