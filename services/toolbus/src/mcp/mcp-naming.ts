import { createHash } from 'node:crypto';

/** Longest tool name every LLM provider accepts. */
export const MAX_TOOL_NAME = 64;

/**
 * The name a server's tool is offered under: `<server>_<tool>`, with every character outside
 * `[A-Za-z0-9_-]` replaced by `_`, and at most 64 characters. A longer name is cut and ends with
 * `_` and 8 hex digits of a hash of the full name, so two long names stay apart.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${server}_${tool}`;
  const clean = full.replace(/[^A-Za-z0-9_-]/g, '_');
  if (clean.length <= MAX_TOOL_NAME) return clean;
  return `${clean.slice(0, MAX_TOOL_NAME - 9)}_${shortHash(full)}`;
}

/** The name for a tool whose prefixed name is already taken by another server's tool. */
export function disambiguatedName(server: string, tool: string): string {
  const base = mcpToolName(server, tool);
  return `${base.slice(0, MAX_TOOL_NAME - 9)}_${shortHash(`${server}\u0000${tool}`)}`;
}

export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}
