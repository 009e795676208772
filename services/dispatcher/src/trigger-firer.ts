import type { JsMsg } from '@nats-io/jetstream';
import { isTeamName, matchCondition, PAYLOAD_LIMITS, TaskRequest, validate, type Trigger } from '@hermes/contracts';
import { decodeJson, submitTask, type Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import type { TriggerStore } from './trigger-store.js';
import { renderTemplate, subjectMatches } from './trigger-spec.js';

/** The CloudEvents source of every task a trigger starts; the event id is `<trigger>@<stream seq>`. */
export const TRIGGER_SOURCE = 'hermes/triggers';

/** The event id of one firing: with the owner's team and TRIGGER_SOURCE it names the firing's task. */
export const triggerFiringId = (t: Pick<Trigger, 'trigger_id'>, streamSeq: number): string => `${t.trigger_id}@${streamSeq}`;

/**
 * Starts the tasks of a team event. Every dispatcher replica pulls from the one durable on the team
 * events stream, so each event is handled by one replica at a time; a redelivery (the replica died,
 * a submit failed) submits the same task ids again, which the submit stream and the intake drop as
 * duplicates. The event is acked only after every matching trigger's task was submitted.
 */
export class TriggerFirer {
  constructor(private readonly o: { bus: Bus; store: TriggerStore; logger: Logger }) {}

  async handle(msg: JsMsg): Promise<void> {
    const base = `${this.o.bus.subjects.prefix}.events.`;
    const rest = msg.subject.slice(base.length);
    const dot = rest.indexOf('.');
    const team = dot > 0 ? rest.slice(0, dot) : '';
    const subject = rest.slice(dot + 1);
    if (!msg.subject.startsWith(base) || !isTeamName(team)) {
      this.o.logger.warn({ subject: msg.subject, seq: msg.seq }, 'team event on a subject that names no team ignored');
      return;
    }
    const decoded = decodeJson(msg.data, PAYLOAD_LIMITS.toolArguments);
    // An unreadable payload still matches a trigger that reads nothing from it.
    const event = decoded.ok ? decoded.value : undefined;
    for (const t of await this.o.store.ofTeam(team)) {
      if (t.paused || !subjectMatches(t.subject, subject)) continue;
      if (t.condition !== undefined && !matchCondition(t.condition, event)) continue;
      await this.fire(t, event, msg.seq);
    }
  }

  private async fire(t: Trigger, event: unknown, seq: number): Promise<void> {
    const log = { trigger_id: t.trigger_id, team: t.team, user_id: t.user_id, seq };
    const rendered = renderTemplate(t.task, event);
    if (!rendered.ok) {
      this.o.logger.warn({ ...log, missing: rendered.missing }, 'trigger not fired: its task names fields the event has no string at');
      return;
    }
    const request = validate(TaskRequest, { ...rendered.task, user_id: t.user_id });
    if (!request.ok) {
      this.o.logger.warn({ ...log, issues: request.issues }, 'trigger not fired: the task filled in from the event is not a valid task request');
      return;
    }
    const { taskId, duplicate } = await submitTask(this.o.bus, request.value, { team: t.team, source: TRIGGER_SOURCE, id: triggerFiringId(t, seq) });
    // A duplicate is a redelivered event whose task exists: it was counted then.
    if (duplicate) return;
    this.o.logger.info({ ...log, task_id: taskId }, 'trigger fired');
    const now = new Date().toISOString();
    await this.o.store.update({ team: t.team, user_id: t.user_id }, t.trigger_id, (cur) => ({
      ...cur,
      firings: cur.firings + 1,
      updated_at: now,
      // Events are handled concurrently: the last firing is the one of the latest event.
      ...((cur.last_event_seq ?? 0) < seq ? { last_fire_at: now, last_task_id: taskId, last_event_seq: seq } : {}),
    }));
  }
}
