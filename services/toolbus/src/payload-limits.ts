import { PAYLOAD_LIMITS, checkLimits, type LimitIssue, type ToolError } from '@hermes/contracts';
import type { ArgumentIssue } from './tool-types.js';

/** Limit issues as argument issues a model can act on: where, what is wrong, the bound and what it sent. */
export function limitArgumentIssues(issues: readonly LimitIssue[]): ArgumentIssue[] {
  return issues.map((i) => ({
    path: i.path,
    message: `${i.message} (payload limit ${i.limit})`,
    expected: i.limit === 'forbiddenKey' ? 'no such key' : `at most ${i.max}`,
    got: String(i.actual),
  }));
}

/**
 * The tool error for a result over the tool-result limits (from a built-in, a remote provider or
 * an MCP server), or undefined when it is within them. Checked before anything walks the result
 * recursively (normalizing, shaping, caching, recording); the model is told, and the call is
 * finished with this error like any other failure. Not retryable: the same call returns the same.
 */
export function resultOverLimits(tool: string, result: unknown): ToolError | undefined {
  const issues = checkLimits(result, PAYLOAD_LIMITS.toolResult);
  if (issues.length === 0) return undefined;
  const first = issues[0]!;
  return {
    code: 'tool_failed',
    message: `the result of tool "${tool}" is over the tool-result limit ${first.limit} at ${first.path || '(root)'}: it ${first.message}; the result was dropped. Call it with arguments that ask for less, or do without it.`,
    retryable: false,
    issues: limitArgumentIssues(issues),
  };
}
