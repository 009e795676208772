import { httpGetTool, type HttpGetOptions } from './http-get-tool.js';
import { dateAddTool, dateDiffTool, timeNowTool } from './time-tools.js';
import type { BuiltinTool } from './tool-types.js';

export { timeNowTool, dateAddTool, dateDiffTool } from './time-tools.js';
export { httpGetTool } from './http-get-tool.js';

/** Returns its input: the simplest tool, used to exercise the tool-calling path end to end. */
export const echoTool: BuiltinTool = {
  spec: {
    name: 'echo',
    description: 'Returns the given text unchanged.',
    parameters: {
      type: 'object',
      properties: {
        text: { type: 'string', maxLength: 10_000, description: 'The text to return.' },
      },
      required: ['text'],
      additionalProperties: false,
    },
    timeout_ms: 1000,
    idempotent: true,
  },
  async run(args) {
    return String(args.text);
  },
};

/**
 * The tools every toolbus replica offers, before remote providers add theirs. The memory tools
 * (`remember` / `recall`, see memory-tools.ts) are added by the toolbus, which has the bus they need.
 */
export function builtinTools(o: { http: HttpGetOptions }): BuiltinTool[] {
  return [timeNowTool, echoTool, dateAddTool, dateDiffTool, httpGetTool(o.http)];
}
