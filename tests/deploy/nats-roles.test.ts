import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { HERMES_SERVICES, JETSTREAM_ROLES } from '@hermes/contracts/nats-permissions';
import { root } from './chart-files.js';

// JETSTREAM_ROLES (libs/contracts) is the one table the NATS users are generated from besides the
// catalog. It must say what the services really do: the streams and consumers each service hands
// to hostService (in main.ts, or the service module main.ts hosts), and the KV buckets its code opens. A service that starts using another stream or
// bucket fails here before it fails in a least-privilege deployment.
const sourceOf = (service: string): string => {
  const dir = service === 'cli' ? `${root}tools/cli/src` : `${root}services/${service}/src`;
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  return files.map((f) => readFileSync(`${dir}/${f}`, 'utf8')).join('\n');
};
const listIn = (main: string, key: string): string[] => {
  const m = new RegExp(`(?:^\\s*|[{,]\\s*)${key}: \\[([^\\]]*)\\]`, 'm').exec(main);
  return m ? [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!).sort() : [];
};

describe('JETSTREAM_ROLES', () => {
  it.each(HERMES_SERVICES)('%s: streams, used streams and durable consumers are those it hands to hostService', (service) => {
    const main = sourceOf(service);
    const role = JETSTREAM_ROLES[service];
    // The toolbus declares its audit stream itself (audit-log.ts), not through hostService.
    const owned = service === 'toolbus' ? [...listIn(main, 'streams'), 'toolAudit'].sort() : listIn(main, 'streams');
    expect([...(role.owns ?? [])].sort()).toEqual(owned);
    expect([...(role.uses ?? [])].sort()).toEqual(listIn(main, 'uses'));
    expect((role.durables ?? []).map((d) => d.consumer).sort()).toEqual(listIn(main, 'consumers'));
  });

  it.each(HERMES_SERVICES)('%s: KV buckets are those its code opens', (service) => {
    const used = [...new Set([...sourceOf(service).matchAll(/subjects\.buckets\.(\w+)/g)].map((m) => m[1]!))].sort();
    expect([...(JETSTREAM_ROLES[service].buckets ?? [])].sort()).toEqual(used);
  });

  it('the toolbus really declares the audit stream itself', () => {
    expect(sourceOf('toolbus')).toMatch(/name: bus\.subjects\.streams\.toolAudit/);
  });
});

// The other source, the catalog, must name each party for every contract its code uses: a
// contract missing there is a subject the generated user is refused.
describe('the contract catalog', () => {
  it.each([...HERMES_SERVICES, 'cli'])('lists %s for every contract its code uses', (party) => {
    const code = sourceOf(party);
    const used = new Set([...code.matchAll(/contracts\.(\w+)/g)].map((m) => m[1]!));
    // Task helpers of libs/bus publish submissions and follow task events.
    if (/\bsubmitTask\(/.test(code)) used.add('taskSubmit');
    if (/\bfollowTaskEvents\(/.test(code)) used.add('taskEvents');
    const missing = [...used].flatMap((name) => {
      const c = contracts[name as keyof typeof contracts];
      if (!c) return [];
      const parties: readonly string[] = c.kind === 'request' ? [c.responder, ...c.requesters] : [...c.producers, ...c.consumers];
      return parties.includes(party) ? [] : [name];
    });
    expect(missing).toEqual([]);
  });
});
