import { conditionProblems } from './condition-match.js';
import { FORBIDDEN_KEYS } from './limits.js';
import type { ValidationIssue } from './schemas/common.js';
import { UNIT_FACTORS, type ArgumentRule, type ArgumentTransform } from './schemas/tool-calls.js';

/** The dimension a unit belongs to (`duration` for `min`), or undefined for a unit no transform knows. */
export function dimensionOf(unit: string): string | undefined {
  return Object.keys(UNIT_FACTORS).find((d) => Object.hasOwn(UNIT_FACTORS[d]!, unit));
}

/**
 * What the schema cannot say about a tool's `transforms` and `rules`: unknown units, malformed
 * conditions, rule names used twice. A provider refuses to start with such a tool (tool-sdk) and the
 * ToolBus refuses to offer it, with these paths and messages.
 */
export function argumentPolicyProblems(spec: { transforms?: readonly ArgumentTransform[]; rules?: readonly ArgumentRule[] }): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  (spec.transforms ?? []).forEach((t, i) => {
    // A transform writes at its field: a prototype key there would be prototype pollution.
    if (t.field === '' || t.field.split('/').some((k) => FORBIDDEN_KEYS.includes(k)))
      issues.push({ path: `/transforms/${i}/field`, message: 'must name an argument (not the root, __proto__, constructor or prototype)' });
    if (t.op === 'unit' && !dimensionOf(t.unit)) {
      const known = Object.values(UNIT_FACTORS).flatMap((f) => Object.keys(f));
      issues.push({ path: `/transforms/${i}/unit`, message: `is not a known unit (known: ${known.join(', ')})` });
    }
  });
  const names = new Set<string>();
  (spec.rules ?? []).forEach((r, i) => {
    if (names.has(r.name)) issues.push({ path: `/rules/${i}/name`, message: `"${r.name}" names two rules` });
    names.add(r.name);
    issues.push(...conditionProblems(r.condition, `/rules/${i}/condition`));
  });
  return issues;
}
