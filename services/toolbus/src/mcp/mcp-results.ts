import type { ToolError } from '@hermes/contracts';
import type { ExecOutcome } from '../tool-types.js';

/** The parts of an MCP `CallToolResult` the toolbus reads. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

const ERROR_TEXT_MAX = 4000;

/**
 * An MCP tool result as the model gets it: `structuredContent` as it is; otherwise the content
 * as one text (wrapped `{ "result": "..." }` by the result shaper), where images, audio and
 * resources are described in a line rather than dumped. `isError: true` becomes a `tool_failed`
 * error carrying the server's text, so the model sees what went wrong.
 */
export function outcomeOfMcpResult(tool: string, r: McpCallResult): ExecOutcome {
  if (r.isError) {
    const text = contentText(r.content ?? []) || (r.structuredContent !== undefined ? JSON.stringify(r.structuredContent) : 'no details');
    const error: ToolError = { code: 'tool_failed', message: `tool "${tool}" reported an error: ${text.slice(0, ERROR_TEXT_MAX)}`, retryable: false };
    return { ok: false, error };
  }
  if (r.structuredContent !== undefined && r.structuredContent !== null) return { ok: true, result: r.structuredContent };
  // Servers speaking the 2024-10-07 protocol answer { toolResult }.
  if (r.content === undefined && r.toolResult !== undefined) return { ok: true, result: r.toolResult };
  return { ok: true, result: contentText(r.content ?? []) };
}

/** The content blocks as text, one block after the other. */
export function contentText(content: unknown[]): string {
  return content
    .map(describeBlock)
    .filter((t) => t.length > 0)
    .join('\n');
}

function describeBlock(block: unknown): string {
  if (typeof block !== 'object' || block === null) return '';
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? b.text : '';
    case 'image':
    case 'audio':
      return `[${b.type} ${str(b.mimeType)}, ${sizeOf(b.data)}, not shown]`;
    case 'resource_link':
      return `[resource link ${str(b.uri)}${b.name ? ` "${str(b.name)}"` : ''}${b.mimeType ? ` (${str(b.mimeType)})` : ''}]`;
    case 'resource': {
      const r = (b.resource ?? {}) as Record<string, unknown>;
      const size = typeof r.text === 'string' ? `${r.text.length} characters of text` : sizeOf(r.blob);
      return `[embedded resource ${str(r.uri)}${r.mimeType ? ` (${str(r.mimeType)})` : ''}, ${size}, not shown; read it with the server's resources]`;
    }
    default:
      return `[${str(b.type)} content, not shown]`;
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : 'unknown';
}

/** The decoded size of base64 data, for people. */
function sizeOf(data: unknown): string {
  if (typeof data !== 'string') return 'size unknown';
  const bytes = Math.floor((data.length * 3) / 4);
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`;
}
