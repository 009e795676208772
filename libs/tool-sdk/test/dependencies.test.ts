import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Other teams install the SDK beside their own stack: it must bring the NATS client, the contracts
// and the OpenTelemetry API, never Hermes' bus library or a telemetry SDK of its own.
const libs = fileURLToPath(new URL('../../', import.meta.url));
const dependenciesOf = (lib: string): string[] =>
  Object.keys((JSON.parse(readFileSync(`${libs}${lib}/package.json`, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {});

/** Every package the SDK brings at run time through Hermes libraries (their own third-party ones included). */
function closure(): Set<string> {
  const seen = new Set<string>();
  const visit = (lib: string) => {
    for (const dep of dependenciesOf(lib)) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      if (dep.startsWith('@hermes/')) visit(dep.slice('@hermes/'.length));
    }
  };
  visit('tool-sdk');
  return seen;
}

describe('@hermes/tool-sdk dependencies', () => {
  it('are the NATS client, the contracts and the OpenTelemetry API, besides its schema tools', () => {
    expect(dependenciesOf('tool-sdk').sort()).toEqual(['@hermes/contracts', '@nats-io/transport-node', '@opentelemetry/api', '@sinclair/typebox', 'ajv']);
  });

  it('bring no Hermes library but the contracts, and no telemetry SDK or logger', () => {
    const all = [...closure()];
    expect(all.filter((d) => d.startsWith('@hermes/'))).toEqual(['@hermes/contracts']);
    expect(all.filter((d) => /^@opentelemetry\/(?!api$)|^pino/.test(d))).toEqual([]);
  });
});
