import { Ajv } from 'ajv';
import { ToolSpec, argumentPolicyProblems, validate } from '@hermes/contracts';
import type { HostedTool } from './define-tool.js';
import { ToolProviderConfigError } from './errors.js';

// The formats the ToolBus validates (ajv-formats and its own `date-or-date-time`): known here only
// by name, since the provider does not validate values; an unknown one fails strict compilation.
const TOOLBUS_FORMATS = Object.fromEntries(
  [
    'date',
    'time',
    'date-time',
    'iso-time',
    'iso-date-time',
    'duration',
    'uri',
    'uri-reference',
    'uri-template',
    'url',
    'email',
    'hostname',
    'ipv4',
    'ipv6',
    'regex',
    'uuid',
    'json-pointer',
    'json-pointer-uri-fragment',
    'relative-json-pointer',
    'byte',
    'int32',
    'int64',
    'float',
    'double',
    'password',
    'binary',
    'date-or-date-time',
  ].map((f) => [f, true as const]),
);

/** Checks every tool as the ToolBus will, and returns their specs as plain JSON (as announced). */
export function checkedSpecs(provider: string, tools: readonly HostedTool[]): ToolSpec[] {
  if (tools.length === 0) throw new ToolProviderConfigError(provider, 'hosts no tools');
  // The ToolBus compiles argument schemas in strict mode and refuses tools it cannot validate
  // strictly; checking the same here makes a provider fail at start-up instead of its tools
  // silently never appearing. A fresh instance, so two providers may reuse a schema `$id`.
  const schemaChecker = new Ajv({ strict: true, allErrors: true, formats: TOOLBUS_FORMATS });
  const names = new Set<string>();
  return tools.map(({ spec, handler }) => {
    // A TypeBox schema carries symbol keys; the wire (and the ToolBus) sees plain JSON.
    const plain = JSON.parse(JSON.stringify(spec)) as ToolSpec;
    const label = `tool "${String(spec?.name)}"`;
    const shape = validate(ToolSpec, plain);
    if (!shape.ok) {
      throw new ToolProviderConfigError(provider, `${label}: ${shape.issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`);
    }
    // Transforms and rules run in the ToolBus, which refuses a tool whose ones it cannot run.
    const policy = argumentPolicyProblems(plain);
    if (policy.length) throw new ToolProviderConfigError(provider, `${label}: ${policy.map((i) => `${i.path} ${i.message}`).join('; ')}`);
    if (typeof handler !== 'function') throw new ToolProviderConfigError(provider, `${label} has no handler`);
    if (names.has(plain.name)) throw new ToolProviderConfigError(provider, `${label} is listed twice`);
    names.add(plain.name);
    const params = plain.parameters;
    // Function-calling APIs need an object at the root; a closed object keeps the model from
    // inventing arguments the handler would silently ignore.
    if (params.type !== 'object') throw new ToolProviderConfigError(provider, `${label}: parameters must have type "object"`);
    if (params.additionalProperties !== false) throw new ToolProviderConfigError(provider, `${label}: parameters must set additionalProperties: false`);
    try {
      schemaChecker.compile(params);
    } catch (err) {
      throw new ToolProviderConfigError(provider, `${label}: parameters is not a strict JSON Schema: ${(err as Error).message}`, { cause: err });
    }
    return plain;
  });
}
