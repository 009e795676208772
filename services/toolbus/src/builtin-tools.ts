import type { ToolDefinition } from '@hermes/contracts';

/** The current time; lets a model answer "what day is it" without guessing from its training data. */
export const timeNowTool: ToolDefinition = {
  name: 'time_now',
  description: 'Returns the current date and time as an ISO 8601 string, in UTC or in the given IANA time zone.',
  parameters: {
    type: 'object',
    properties: {
      timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone name, e.g. "Europe/Paris". Defaults to UTC.' },
    },
    additionalProperties: false,
  },
};

/** Returns its input: the simplest tool, used to exercise the tool-calling path end to end. */
export const echoTool: ToolDefinition = {
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
};

/** Tools every toolbus replica offers, before MCP servers add theirs. */
export const builtinTools: readonly ToolDefinition[] = [timeNowTool, echoTool];
