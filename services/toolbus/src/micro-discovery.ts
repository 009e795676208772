import {
  MicroServiceInfo,
  MicroServicePing,
  MicroServiceSchema,
  TOOL_SPEC_METADATA,
  ToolSpec,
  microSubject,
  validate,
  type ToolSpec as Spec,
} from '@hermes/contracts';
import { microServiceReplies, type Bus } from '@hermes/bus';
import { BUILTIN_PROVIDER, type ToolRegistry } from './tool-registry.js';

/** A provider's name is one subject token (as PROVIDER_NAME of the contracts' NATS permissions). */
const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface MicroDiscoveryOptions {
  bus: Bus;
  registry: ToolRegistry;
  /** TOOL_SRV_DISCOVERY_INTERVAL_MS: one round of `$SRV.PING` + `$SRV.INFO.<name>` this often. */
  intervalMs: number;
  /** How long a round waits for replies to each request; default a fifth of the interval, at most 1 s. */
  waitMs?: number;
}

/** A running discovery; `round()` runs one at once (tests, and the first one at start). */
export interface MicroDiscovery {
  round(): Promise<void>;
  stop(): void;
}

/**
 * Finds tool providers that are plain NATS micro services and feeds them to the same registry as
 * announcements. Identity: a name is only believed from `$SRV.INFO.<name>` (which only that
 * provider's NATS user may subscribe to) and only endpoints under its own exec subject count (which
 * only it may serve), so a rival login answering `$SRV.PING` with another's name gains nothing. An
 * instance is kept for two and a half intervals: gone after two rounds it did not answer.
 */
export function discoverMicroProviders(o: MicroDiscoveryOptions): MicroDiscovery {
  const waitMs = o.waitMs ?? Math.min(1000, Math.max(50, Math.floor(o.intervalMs / 5)));
  const ttlMs = Math.max(1000, Math.floor(o.intervalMs * 2.5));
  const log = o.bus.logger.child({ component: 'micro-discovery' });
  let running: Promise<void> | undefined;

  const discoverOne = async (name: string): Promise<void> => {
    const infos = await microServiceReplies(o.bus, microSubject('INFO', name), MicroServiceInfo, waitMs);
    for (const info of infos) {
      if (info.name !== name) continue;
      const found = await endpointsOf(info);
      if (found.length === 0) continue;
      const endpoints = new Map(found.map((f) => [f.spec.name, f.subject]));
      o.registry.announce({ provider: name, instance_id: info.id, tools: found.map((f) => f.spec), ttl_ms: ttlMs }, Date.now(), endpoints);
    }
  };

  /** The tools of one instance: endpoint metadata (current clients), else `$SRV.SCHEMA` (Go micro before 1.24). */
  const endpointsOf = async (info: MicroServiceInfo): Promise<{ spec: Spec; subject: string }[]> => {
    const own = o.bus.subjects.toolExec(info.name);
    const mine = (subject: string) => subject === own || (subject.startsWith(`${own}.`) && !subject.slice(own.length + 1).includes('.'));
    const listed = Array.isArray(info.endpoints) ? info.endpoints : [];
    const objects = listed.filter((e): e is Exclude<(typeof listed)[number], string> => typeof e === 'object');
    const out: { spec: Spec; subject: string }[] = [];
    for (const e of objects) {
      const text = e.metadata?.[TOOL_SPEC_METADATA];
      const spec = text === undefined ? undefined : specOf(text);
      if (spec && mine(e.subject)) out.push({ spec, subject: e.subject });
    }
    if (out.length > 0 || objects.length > 0) return out;
    // Older Go micro: one endpoint (a subject string), the specs as an array in schema.request.
    const subject = info.subject ?? listed.find((e): e is string => typeof e === 'string');
    if (!subject || !mine(subject)) return [];
    const schemas = await microServiceReplies(o.bus, microSubject('SCHEMA', info.name, info.id), MicroServiceSchema, waitMs);
    const request = schemas.find((s) => s.id === info.id)?.schema?.request;
    const specs = request === undefined ? [] : specsOf(request);
    return specs.map((spec) => ({ spec, subject }));
  };

  const round = async (): Promise<void> => {
    const pings = await microServiceReplies(o.bus, microSubject('PING'), MicroServicePing, waitMs);
    const names = new Set(pings.map((p) => p.name).filter((n) => PROVIDER_NAME.test(n) && n !== BUILTIN_PROVIDER));
    await Promise.all([...names].map((name) => discoverOne(name).catch((err: unknown) => log.warn({ err, provider: name }, 'could not read a micro service'))));
  };
  const once = (): Promise<void> => (running ??= round().finally(() => (running = undefined)));

  const timer = setInterval(() => void once(), o.intervalMs);
  timer.unref();
  return { round: once, stop: () => clearInterval(timer) };
}

function specOf(text: string): Spec | undefined {
  try {
    const value: unknown = JSON.parse(text);
    const checked = validate(ToolSpec, value);
    return checked.ok ? checked.value : undefined;
  } catch {
    return undefined;
  }
}

function specsOf(text: string): Spec[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.flatMap((v) => (validate(ToolSpec, v).ok ? [v as Spec] : [])) : [];
  } catch {
    return [];
  }
}
