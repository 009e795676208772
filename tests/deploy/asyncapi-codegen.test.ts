import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { GO_COMMON_PRESET, GoGenerator, TypeScriptGenerator, type OutputModel } from '@asyncapi/modelina';

// Other teams generate their types from docs/asyncapi.yaml; this runs the AsyncAPI Initiative's
// generator (modelina) on it, with the options docs/architecture.md ("Generating code from the contracts") recommends, and checks the code
// is usable: every type named after a schema title (no AnonymousSchema_<n>, whose numbers change
// whenever the document does), CloudEvents attributes under their own names, Go fields with json tags.

const docText = readFileSync(fileURLToPath(new URL('../../docs/asyncapi.yaml', import.meta.url)), 'utf8');
const doc = parse(docText) as { channels: Record<string, { address: string | null }>; components: { schemas: Record<string, { title?: string }> } };
const architecture = readFileSync(fileURLToPath(new URL('../../docs/architecture.md', import.meta.url)), 'utf8');

/** Every `title` in the document: the names a generated type may have. */
function titles(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => titles(n, out));
  else if (node && typeof node === 'object') {
    const obj = node as Record<string, unknown>;
    if (typeof obj.title === 'string') out.add(obj.title);
    Object.values(obj).forEach((v) => titles(v, out));
  }
  return out;
}

const byName = (models: OutputModel[], name: string): string => {
  const found = models.find((m) => m.modelName === name);
  if (!found) throw new Error(`no model ${name}; have ${models.map((m) => m.modelName).join(', ')}`);
  return found.result;
};

describe('docs/asyncapi.yaml generates clean code with modelina', () => {
  it("docs/architecture.md's subject table names every channel's subject in full", () => {
    const table = architecture.slice(architecture.indexOf('## Subjects and streams'), architecture.indexOf('Request/reply answers are always'));
    const missing = Object.entries(doc.channels)
      .filter(([, c]) => c.address !== null)
      .map(([name, c]) => [name, `\`${c.address!.replace(/\{([a-z_]+)\}/g, '<$1>')}\``] as const)
      .filter(([, subject]) => !table.includes(subject));
    expect(missing).toEqual([]);
  });

  it('every component schema has a title equal to its name', () => {
    for (const [name, schema] of Object.entries(doc.components.schemas)) expect(schema.title, name).toBe(name);
  });

  it('TypeScript: no anonymous types, every model named by a title, CloudEvents attributes keep their names', async () => {
    // rawPropertyNames keeps wire names (`type`, `task_id`) as quoted keys instead of reserved-word-mangled ones (`reservedType`).
    const models = await new TypeScriptGenerator({ modelType: 'interface', rawPropertyNames: true }).generate(doc);
    expect(models.length).toBeGreaterThan(100);
    const known = titles(doc);
    expect(models.filter((m) => /AnonymousSchema/i.test(m.modelName) || /AnonymousSchema/i.test(m.result)).map((m) => m.modelName)).toEqual([]);
    expect(models.map((m) => m.modelName).filter((n) => !known.has(n))).toEqual([]);
    const submit = byName(models, 'TaskSubmitEvent');
    expect(submit).not.toMatch(/reserved/i);
    for (const attr of ['specversion', 'type', 'source', 'id', 'datacontenttype', 'traceparent', 'data']) expect(submit).toContain(`'${attr}'`);
    expect(byName(models, 'TaskAcceptedData')).toContain("'task_id': string;");
    // The reply envelope's members are named types too.
    expect(byName(models, 'ErrorReply')).toContain("'error': WireError;");
  });

  it('Go: no anonymous types, and snake_case fields carry json tags with their wire names', async () => {
    const models = await new GoGenerator({ presets: [{ preset: GO_COMMON_PRESET, options: { addJsonTag: true } }] }).generate(doc);
    expect(models.filter((m) => /AnonymousSchema/i.test(m.modelName) || /AnonymousSchema/i.test(m.result)).map((m) => m.modelName)).toEqual([]);
    const accepted = byName(models, 'TaskAcceptedData');
    expect(accepted).toMatch(/TaskId\s+string\s+`json:"task_id" binding:"required"`/);
    expect(accepted).toMatch(/SourceEvent\s+\*TaskAcceptedDataSourceEvent\s+`json:"source_event"/);
    // Every struct field line has a json tag (a field without one would marshal as its Go name).
    const fieldLines = models.flatMap((m) =>
      [...m.result.matchAll(/^\s+([A-Z]\w*)\s+[^\s`]+(.*)$/gm)].map((f) => ({ model: m.modelName, line: f[0].trim(), rest: f[2] ?? '' })),
    );
    expect(fieldLines.length).toBeGreaterThan(200);
    expect(fieldLines.filter((f) => !/`json:"[^"]+"/.test(f.rest)).map((f) => `${f.model}: ${f.line}`)).toEqual([]);
    expect(byName(models, 'TaskSubmitEvent')).toMatch(/Type\s+string\s+`json:"type"/);
  });
});
