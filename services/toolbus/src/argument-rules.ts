import { conditionFields, matchCondition, valueAtPointer, type ArgumentRule } from '@hermes/contracts';
import { preview } from './argument-issues.js';
import type { ArgumentIssue, ToolArguments } from './tool-types.js';

/**
 * The last step of a call (repair → transform → validate → rules): the tool's business
 * pre-checks over its validated arguments. Every broken rule is an issue naming the rule, the
 * argument it is about (the first field its condition reads) and the rule's own message.
 */
export function brokenRules(rules: readonly ArgumentRule[], args: ToolArguments): ArgumentIssue[] {
  const issues: ArgumentIssue[] = [];
  for (const rule of rules) {
    if (matchCondition(rule.condition, args)) continue;
    const path = conditionFields(rule.condition)[0] ?? '';
    issues.push({
      path,
      message: rule.message,
      expected: `arguments that satisfy the rule "${rule.name}"`,
      got: preview(valueAtPointer(args, path)),
      rule: rule.name,
    });
  }
  return issues;
}
