import { Ajv } from 'ajv';
import { validate, ToolDefinition } from '@hermes/contracts';
import { InvalidToolDefinitionError } from './toolbus-errors.js';

// Strict mode rejects unknown keywords and other schema mistakes, so a typo in a tool's schema
// fails at start-up instead of silently accepting any arguments from the model.
const schemaChecker = new Ajv({ strict: true, allErrors: true });

/**
 * The tools this toolbus offers, in registration order. Every definition is checked when it is
 * registered: a valid contract shape, a unique name, and a strict JSON Schema for its arguments.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  constructor(opts: { tools?: readonly ToolDefinition[] } = {}) {
    for (const tool of opts.tools ?? []) this.register(tool);
  }

  /** Adds a tool; throws InvalidToolDefinitionError when it could not be offered to a model. */
  register(tool: ToolDefinition): void {
    const shape = validate(ToolDefinition, tool);
    if (!shape.ok) {
      throw new InvalidToolDefinitionError(tool.name, shape.issues.map((i) => `${i.path || '/'} ${i.message}`).join('; '));
    }
    if (this.tools.has(tool.name)) throw new InvalidToolDefinitionError(tool.name, 'is already registered');
    assertStrictSchema(tool);
    this.tools.set(tool.name, tool);
  }

  /** Every registered tool, in registration order. */
  list(): ToolDefinition[] {
    return [...this.tools.values()];
  }
}

function assertStrictSchema(tool: ToolDefinition): void {
  const params = tool.parameters;
  // Function-calling APIs require an object at the root; closing it keeps the model from
  // inventing arguments that a tool would silently ignore.
  if (params.type !== 'object') throw new InvalidToolDefinitionError(tool.name, 'parameters must have type "object"');
  if (params.additionalProperties !== false) throw new InvalidToolDefinitionError(tool.name, 'parameters must set additionalProperties: false');
  try {
    schemaChecker.compile(params);
  } catch (err) {
    throw new InvalidToolDefinitionError(tool.name, `parameters is not a valid JSON Schema: ${(err as Error).message}`, { cause: err });
  }
}
