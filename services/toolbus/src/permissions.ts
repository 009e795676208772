import type { ToolSpec } from '@hermes/contracts';

/** What a caller brings: its roles, and the task's allow-list of tools when it has one. */
export interface Access {
  roles?: readonly string[];
  allow?: readonly string[];
}

/** Why a caller may not use a tool, or undefined when it may. */
export function denialOf(tool: Pick<ToolSpec, 'name' | 'roles'>, access: Access): string | undefined {
  if (access.allow && !access.allow.includes(tool.name)) {
    return `tool "${tool.name}" is not in this task's tool allow-list`;
  }
  // `roles` is any-of; a tool without roles is open to every caller.
  if (tool.roles && !tool.roles.some((r) => access.roles?.includes(r))) {
    return `tool "${tool.name}" requires one of the roles ${tool.roles.join(', ')}`;
  }
  return undefined;
}

/** Whether a caller may use a tool. */
export function mayUse(tool: Pick<ToolSpec, 'name' | 'roles'>, access: Access): boolean {
  return denialOf(tool, access) === undefined;
}
