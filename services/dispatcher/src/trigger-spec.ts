import { conditionProblems, valueAtPointer, wireError, type TaskTemplate, type TriggerSpec, type ValidationIssue, type WireError } from '@hermes/contracts';

/** `{{/json/pointer}}` in a template string: replaced by the string at that pointer of the event. */
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const POINTER = /^(\/[^/]*)*$/;
/** Most placeholders in one template, and most characters one placed value may bring in. */
export const TRIGGER_TEMPLATE_LIMITS = { maxPlaceholders: 32, maxValueChars: 4096 } as const;

/**
 * Why a trigger spec cannot be kept (`invalid_trigger`, the caller's fault), or undefined. The
 * filter is relative to the team's events; one that starts with the prefix's `events` names
 * subjects of a team, and another team's are refused (the owner's own are accepted, shortened).
 */
export function triggerProblem(spec: TriggerSpec, scope: { prefix: string; team: string }): WireError | undefined {
  const issues: ValidationIssue[] = [];
  const tokens = spec.subject.split('.');
  if (tokens[0] === scope.prefix) {
    const named = tokens[1] === 'events' ? tokens[2] : undefined;
    return wireError(
      'invalid_trigger',
      named === scope.team
        ? `write the subject relative to your team's events: "${tokens.slice(3).join('.')}" instead of "${spec.subject}"`
        : `a trigger listens only on its own team's events (${scope.prefix}.events.${scope.team}.>); "${spec.subject}" names other subjects`,
      { path: '/subject', team: scope.team, subject: spec.subject },
    );
  }
  if (spec.condition !== undefined) issues.push(...conditionProblems(spec.condition, '/condition'));
  issues.push(...templateProblems(spec.task));
  if (issues.length === 0) return undefined;
  return wireError('invalid_trigger', `the trigger cannot be used: ${issues[0]!.path} ${issues[0]!.message}`, { issues });
}

/** Problems with the `{{...}}` placeholders of a template's strings. */
export function templateProblems(task: TaskTemplate): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  let count = 0;
  forEachString(task, '/task', (text, path) => {
    for (const m of text.matchAll(PLACEHOLDER)) {
      if (++count > TRIGGER_TEMPLATE_LIMITS.maxPlaceholders) {
        if (count === TRIGGER_TEMPLATE_LIMITS.maxPlaceholders + 1)
          issues.push({ path, message: `holds more than ${TRIGGER_TEMPLATE_LIMITS.maxPlaceholders} placeholders` });
        return;
      }
      if (!POINTER.test(m[1]!)) issues.push({ path, message: `placeholder {{${m[1]!.slice(0, 64)}}} must be a JSON Pointer, e.g. {{/host}}` });
    }
    // A lone `{{` would be read differently once an event fills it in: refuse it now.
    const rest = text.replace(PLACEHOLDER, '');
    if (rest.includes('{{') || rest.includes('}}')) issues.push({ path, message: 'has an unclosed {{ or a stray }}' });
  });
  return issues;
}

/**
 * The template with every placeholder replaced by the event's string at its pointer (one pass: a
 * placed value is never read as a template), or the pointers that are missing or not strings.
 */
export function renderTemplate(task: TaskTemplate, event: unknown): { ok: true; task: TaskTemplate } | { ok: false; missing: string[] } {
  const missing: string[] = [];
  const fill = (text: string) =>
    text.replace(PLACEHOLDER, (_all, pointer: string) => {
      const value = valueAtPointer(event, pointer);
      if (typeof value !== 'string') {
        missing.push(pointer);
        return '';
      }
      return value.slice(0, TRIGGER_TEMPLATE_LIMITS.maxValueChars);
    });
  const rendered = mapStrings(task, fill) as TaskTemplate;
  return missing.length ? { ok: false, missing } : { ok: true, task: rendered };
}

function forEachString(value: unknown, path: string, visit: (text: string, path: string) => void): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) value.forEach((v, i) => forEachString(v, `${path}/${i}`, visit));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) forEachString(v, `${path}/${k}`, visit);
}

function mapStrings(value: unknown, fill: (text: string) => string): unknown {
  if (typeof value === 'string') return fill(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fill));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fill)]));
  return value;
}

/** Whether a NATS subject matches a filter (`*` one token, `>` the rest). */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length || (f[i] !== '*' && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}
