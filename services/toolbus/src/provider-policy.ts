import { Type, type Static } from '@sinclair/typebox';
import type { ToolSpec } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import { ChangeWatch, type ToolChange } from './change-watch.js';

const ToolPolicyPin = Type.Object(
  {
    require_confirm: Type.Optional(Type.Boolean()),
    roles: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
  },
  { additionalProperties: false },
);

/** `TOOL_PROVIDER_POLICY`: per remote provider, the tool names it may offer and the policy pinned per tool. */
export const ProviderPolicySetting = Type.Record(
  Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
  Type.Object(
    {
      tools: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'the only tool names it may offer; nobody else may offer them' })),
      pin: Type.Optional(
        Type.Record(Type.String(), ToolPolicyPin, { description: 'per tool: require_confirm, roles, timeout_ms it always gets, whatever it announces' }),
      ),
    },
    { additionalProperties: false },
  ),
  {
    default: {},
    description:
      'JSON: { "<provider>": { "tools": [names], "pin": { "<tool>": { "require_confirm", "roles", "timeout_ms" } } } } — what a remote provider cannot relax',
  },
);
export type ProviderPolicySetting = Static<typeof ProviderPolicySetting>;

/** The fields of a spec that decide who may run a tool, after whose approval, and for how long. */
interface SecurityPolicy {
  require_confirm: boolean;
  roles: readonly string[] | undefined;
  timeout_ms: number;
}

/**
 * Whether `now` lets more happen than `accepted`: approval dropped, roles dropped or a role added
 * (roles are any-of, so each new one admits more callers), or a longer timeout.
 */
function relaxes(accepted: SecurityPolicy, now: SecurityPolicy): boolean {
  if (accepted.require_confirm && !now.require_confirm) return true;
  if (accepted.roles && (!now.roles || now.roles.some((r) => !accepted.roles!.includes(r)))) return true;
  return now.timeout_ms > accepted.timeout_ms;
}

/**
 * The toolbus's rules for remote providers' tools: names outside a provider's pinned `tools` (or
 * pinned to another provider) are refused, pinned policy overrides what is announced, and a spec
 * that relaxes the policy this replica accepted before is held until `hermes mcp approve-change
 * <provider>` (the same ChangeWatch as MCP servers' changed tools).
 */
export class ProviderPolicy {
  private readonly watches = new Map<string, ChangeWatch<SecurityPolicy>>();
  private readonly owners = new Map<string, string>();

  constructor(private readonly o: { pins: ProviderPolicySetting; defaultTimeoutMs: number; logger?: Logger }) {
    for (const [provider, p] of Object.entries(o.pins)) for (const tool of p.tools ?? []) this.owners.set(tool, provider);
  }

  /** Why a provider may not offer a tool of this name at all, or undefined. */
  refusal(provider: string, tool: string): string | undefined {
    const owner = this.owners.get(tool);
    if (owner !== undefined && owner !== provider) return `the name is pinned to provider "${owner}"`;
    const allowed = this.o.pins[provider]?.tools;
    if (allowed && !allowed.includes(tool)) return `it is not among the tools pinned for provider "${provider}" (TOOL_PROVIDER_POLICY)`;
    return undefined;
  }

  /** The spec with the pinned policy in place of what was announced. */
  pinned(provider: string, spec: ToolSpec): ToolSpec {
    const pin = this.o.pins[provider]?.pin?.[spec.name];
    return pin ? { ...spec, ...pin } : spec;
  }

  /** Records a (pinned) spec as announced: the first one of a tool is accepted, a relaxing one is held and logged. */
  see(provider: string, spec: ToolSpec): void {
    let watch = this.watches.get(provider);
    if (!watch) this.watches.set(provider, (watch = new ChangeWatch({ differs: relaxes })));
    const { detected } = watch.see(spec.name, this.policyOf(spec), true);
    if (detected)
      this.o.logger?.warn(
        { provider, tool: spec.name },
        'tool provider relaxed the policy of a tool (require_confirm, roles or timeout_ms); held until approved (hermes mcp approve-change <provider>)',
      );
  }

  /**
   * Whether a spec is held: it relaxes what was accepted and was not approved. Asked of every live
   * instance's spec, so a provider whose instances disagree offers only the ones within policy.
   */
  held(provider: string, spec: ToolSpec): boolean {
    return this.watches.get(provider)?.blocks(spec.name, this.policyOf(spec)) ?? false;
  }

  private policyOf(spec: ToolSpec): SecurityPolicy {
    return { require_confirm: spec.require_confirm === true, roles: spec.roles, timeout_ms: spec.timeout_ms ?? this.o.defaultTimeoutMs };
  }

  /** Whether there is a provider of this name to approve changes of. */
  knows(provider: string): boolean {
    return this.watches.has(provider);
  }

  approve(provider: string, tool?: string): string[] {
    return this.watches.get(provider)?.approve(tool) ?? [];
  }

  changes(provider: string): ToolChange[] {
    return this.watches.get(provider)?.list() ?? [];
  }
}
