import { argumentPolicyProblems, validate, ToolSpec, type ToolProviderAnnouncement } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import type { ArgumentValidator } from './argument-validator.js';
import { mayUse, type Access } from './permissions.js';
import { ProviderPolicy } from './provider-policy.js';
import { InvalidToolDefinitionError } from './toolbus-errors.js';
import type { BuiltinTool, RegisteredTool, ToolHost } from './tool-types.js';

export const BUILTIN_PROVIDER = 'builtin';

export interface ToolRegistryOptions {
  validator: ArgumentValidator;
  defaultTimeoutMs: number;
  builtins?: readonly BuiltinTool[];
  /** What remote providers may offer and cannot relax; default: nothing pinned. */
  providerPolicy?: ProviderPolicy;
  logger?: Logger;
  /**
   * How long after start a tool nobody announced may still be a provider's not heard yet (the
   * toolbus asked every provider to announce itself as it started; TOOL_DISCOVERY_GRACE_MS).
   */
  discoveryGraceMs?: number;
}

/** A tool from a source the registry asks each time (MCP servers, whose tools come and go). */
export interface SourcedTool {
  spec: ToolSpec;
  provider: string;
  host: ToolHost;
}

/** Tools the registry does not hold itself but lists on every lookup. */
export interface ToolSource {
  tools(): readonly SourcedTool[];
  /** Why a tool the source offers at other times is not offered now, if that is the case. */
  unavailable?(name: string): string | undefined;
  /** Whether the name belongs to this source even when it does not offer it now (a remote provider may never take it). */
  owns?(name: string): boolean;
}

/** How long the tools of a provider that stopped announcing are reported as unavailable, not unknown. */
export const WITHDRAWN_MEMORY_MS = 10 * 60_000;

interface Instance {
  expiresAt: number;
  toolsText: string;
  tools: RegisteredTool[];
}

/**
 * Every tool the toolbus can run: built-in tools, then the tools of remote providers in the order
 * the providers first announced themselves. A provider's tools live as long as one of its
 * instances keeps announcing within its `ttl_ms`. When two providers offer the same name, the
 * first keeps it (built-ins always win) and the clash is logged once. A remote provider never gets
 * a name a built-in or a source owns (an MCP server's, even while it is away), and its tools pass
 * the ProviderPolicy: pinned names and policy, relaxed specs held until approved.
 */
export class ToolRegistry {
  private readonly builtins: RegisteredTool[] = [];
  private readonly providers = new Map<string, Map<string, Instance>>();
  private readonly warned = new Set<string>();
  private readonly sources: ToolSource[] = [];
  /** Prepared tools of the sources by provider and spec text (null: the spec cannot be offered). */
  private sourced = new Map<string, RegisteredTool | null>();
  /** Tools of providers that stopped announcing: name → provider and when. */
  private readonly withdrawn = new Map<string, { provider: string; at: number }>();

  private readonly discoveringUntil: number;
  readonly providerPolicy: ProviderPolicy;

  constructor(private readonly o: ToolRegistryOptions) {
    this.providerPolicy = o.providerPolicy ?? new ProviderPolicy({ pins: {}, defaultTimeoutMs: o.defaultTimeoutMs, ...(o.logger ? { logger: o.logger } : {}) });
    for (const tool of o.builtins ?? []) this.addBuiltin(tool);
    this.discoveringUntil = Date.now() + (o.discoveryGraceMs ?? 0);
  }

  /** Whether providers may still be answering the toolbus's discover request, so an unknown tool may yet appear. */
  discovering(now = Date.now()): boolean {
    return now < this.discoveringUntil;
  }

  /** Adds a built-in tool; throws InvalidToolDefinitionError when it could not be offered to a model. */
  addBuiltin(tool: BuiltinTool): void {
    if (this.builtins.some((t) => t.spec.name === tool.spec.name)) throw new InvalidToolDefinitionError(tool.spec.name, 'is already registered');
    this.builtins.push(this.prepare(tool.spec, BUILTIN_PROVIDER, { kind: 'builtin', run: tool.run }));
  }

  /** Adds a source whose tools come after the built-ins and before remote providers' tools. */
  addSource(source: ToolSource): void {
    this.sources.push(source);
  }

  /**
   * Records a provider instance's announcement (also its heartbeat), or what discovery found of a
   * micro service instance (then `endpoints` maps each tool to its endpoint's subject). Invalid tools are skipped and logged.
   */
  announce(a: ToolProviderAnnouncement, now = Date.now(), endpoints?: ReadonlyMap<string, string>): void {
    if (a.provider === BUILTIN_PROVIDER) {
      this.o.logger?.warn({ provider: a.provider }, 'a remote provider may not call itself "builtin"; announcement ignored');
      return;
    }
    let instances = this.providers.get(a.provider);
    if (!instances) this.providers.set(a.provider, (instances = new Map()));
    const toolsText = JSON.stringify([a.tools, endpoints ? [...endpoints] : null]);
    const known = instances.get(a.instance_id);
    const tools = known?.toolsText === toolsText ? known.tools : this.prepareRemote(a, endpoints);
    instances.set(a.instance_id, { expiresAt: now + a.ttl_ms, toolsText, tools });
  }

  /** The tool a call names, if any live provider offers it. */
  resolve(name: string, now = Date.now()): RegisteredTool | undefined {
    return this.all(now).find((t) => t.spec.name === name);
  }

  /**
   * Why a tool that is not on offer was on offer recently and may be again (its MCP server is
   * reconnecting; its provider stopped announcing less than WITHDRAWN_MEMORY_MS ago), so that a
   * call of it is answered as retryable rather than as a tool that does not exist.
   */
  unavailable(name: string, now = Date.now()): string | undefined {
    this.forgetSilent(now);
    for (const source of this.sources) {
      const why = source.unavailable?.(name);
      if (why) return why;
    }
    const gone = this.withdrawn.get(name);
    if (!gone) return undefined;
    return `its provider "${gone.provider}" stopped announcing ${Math.round((now - gone.at) / 1000)} s ago`;
  }

  /** Every tool on offer now, with name clashes resolved. */
  all(now = Date.now()): RegisteredTool[] {
    this.forgetSilent(now);
    const out = [...this.builtins];
    const taken = new Map(out.map((t) => [t.spec.name, t.provider]));
    for (const tool of this.fromSources()) {
      const owner = taken.get(tool.spec.name);
      if (owner === undefined) {
        taken.set(tool.spec.name, tool.provider);
        out.push(tool);
      } else if (owner !== tool.provider) {
        this.warnClash(tool.spec.name, owner, tool.provider);
      }
    }
    const builtinNames = new Set(this.builtins.map((t) => t.spec.name));
    for (const [provider, instances] of this.providers) {
      for (const instance of instances.values()) {
        for (const tool of instance.tools) {
          const name = tool.spec.name;
          const reservedBy = builtinNames.has(name) ? BUILTIN_PROVIDER : this.sources.some((s) => s.owns?.(name)) ? 'an MCP server' : undefined;
          if (reservedBy !== undefined) {
            this.warnClash(name, reservedBy, provider);
            continue;
          }
          if (this.providerPolicy.held(provider, tool.spec)) continue;
          const owner = taken.get(name);
          if (owner === undefined) {
            taken.set(tool.spec.name, provider);
            out.push(tool);
          } else if (owner !== provider) {
            this.warnClash(tool.spec.name, owner, provider);
          }
        }
      }
    }
    return out;
  }

  /** The tools a caller with these roles, under this allow-list, may use. */
  usableBy(access: Access, now = Date.now()): RegisteredTool[] {
    return this.all(now).filter((t) => mayUse(t.spec, access));
  }

  private fromSources(): RegisteredTool[] {
    if (this.sources.length === 0) return [];
    const next = new Map<string, RegisteredTool | null>();
    const out: RegisteredTool[] = [];
    for (const source of this.sources) {
      for (const t of source.tools()) {
        const key = `${t.provider}\u0000${JSON.stringify(t.spec)}\u0000${JSON.stringify(t.host)}`;
        let prepared = this.sourced.get(key);
        if (prepared === undefined) {
          try {
            prepared = this.prepare(t.spec, t.provider, t.host);
          } catch (err) {
            this.o.logger?.warn({ err, provider: t.provider, tool: t.spec.name }, 'skipping a tool that cannot be offered');
            prepared = null;
          }
        }
        next.set(key, prepared);
        if (prepared) out.push(prepared);
      }
    }
    this.sourced = next;
    return out;
  }

  private forgetSilent(now: number): void {
    for (const [provider, instances] of this.providers) {
      const names = new Set<string>();
      let lapsedAt = 0;
      for (const [id, instance] of instances) {
        if (instance.expiresAt > now) continue;
        for (const t of instance.tools) names.add(t.spec.name);
        lapsedAt = Math.max(lapsedAt, instance.expiresAt);
        instances.delete(id);
      }
      if (instances.size === 0) {
        // When its last announcement ran out, not when this lookup noticed.
        for (const name of names) this.withdrawn.set(name, { provider, at: lapsedAt || now });
        this.providers.delete(provider);
        this.o.logger?.info({ provider }, 'tool provider stopped announcing; its tools are withdrawn');
      }
    }
    for (const [name, gone] of this.withdrawn) if (now - gone.at >= WITHDRAWN_MEMORY_MS) this.withdrawn.delete(name);
  }

  private prepareRemote(a: ToolProviderAnnouncement, endpoints?: ReadonlyMap<string, string>): RegisteredTool[] {
    const tools: RegisteredTool[] = [];
    for (const spec of a.tools) {
      const refusal = this.providerPolicy.refusal(a.provider, spec.name);
      if (refusal) {
        this.o.logger?.warn({ provider: a.provider, tool: spec.name }, `skipping an announced tool: ${refusal}`);
        continue;
      }
      const pinned = this.providerPolicy.pinned(a.provider, spec);
      this.providerPolicy.see(a.provider, pinned);
      try {
        const subject = endpoints?.get(spec.name);
        tools.push(this.prepare(pinned, a.provider, { kind: 'remote', provider: a.provider, ...(subject ? { subject } : {}) }));
      } catch (err) {
        this.o.logger?.warn({ err, provider: a.provider, tool: spec.name }, 'skipping an announced tool that cannot be offered');
      }
    }
    return tools;
  }

  private prepare(spec: ToolSpec, provider: string, host: RegisteredTool['host']): RegisteredTool {
    const shape = validate(ToolSpec, spec);
    if (!shape.ok) throw new InvalidToolDefinitionError(String(spec.name), shape.issues.map((i) => `${i.path || '/'} ${i.message}`).join('; '));
    // Function-calling APIs require an object at the root.
    if (spec.parameters.type !== 'object') throw new InvalidToolDefinitionError(spec.name, 'parameters must have type "object"');
    const policy = argumentPolicyProblems(spec);
    if (policy.length) throw new InvalidToolDefinitionError(spec.name, policy.map((i) => `${i.path} ${i.message}`).join('; '));
    try {
      const { schema, validate: check } = this.o.validator.prepare(spec.parameters);
      return { spec: { ...spec, parameters: schema }, provider, host, validate: check, timeoutMs: spec.timeout_ms ?? this.o.defaultTimeoutMs };
    } catch (err) {
      throw new InvalidToolDefinitionError(spec.name, `parameters is not a valid JSON Schema: ${(err as Error).message}`, { cause: err });
    }
  }

  private warnClash(name: string, owner: string, provider: string): void {
    const id = `${name}\u0000${provider}`;
    if (this.warned.has(id)) return;
    this.warned.add(id);
    this.o.logger?.warn({ tool: name, kept_by: owner, ignored_from: provider }, 'two providers offer the same tool name; the first keeps it');
  }
}
