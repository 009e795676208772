import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { subjectsFor, type ToolProviderAnnouncement } from '@hermes/contracts';
import { CallMemory, type CallMemoryOptions } from './call-memory.js';
import type { HostedTool } from './define-tool.js';
import { ToolProviderConfigError } from './errors.js';
import { ExecResponder } from './exec-responder.js';
import { MicroResponder } from './micro-responder.js';
import { checkedSpecs } from './spec-check.js';
import { silentLogger, type ToolSdkLogger } from './sdk-logger.js';

const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface HostToolProviderOptions {
  /** The team's own NATS connection (`connect` of `@nats-io/transport-node`), with a user allowed the provider subjects. */
  nc: NatsConnection;
  /** The Hermes deployment's subject prefix (its HERMES_SUBJECT_PREFIX). Default `hermes`. */
  prefix?: string;
  /** Where to log (a pino logger fits). Default: nothing is logged. */
  logger?: ToolSdkLogger;
  /** The provider's name: its exec subject and queue group. Every instance of one provider uses the same name. */
  provider: string;
  tools: readonly HostedTool[];
  /** With `announce: true`: how long the ToolBus keeps the tools without an announcement from this instance. Default 30 000, at least 1000. */
  ttlMs?: number;
  /** With `announce: true`: announce this often. Default ttlMs / 3, so two lost announcements do not drop the tools. */
  announceEveryMs?: number;
  /** Names this instance (its micro service id, and in announcements). Default: a random UUID. */
  instanceId?: string;
  /** Timeout for tools whose spec has no `timeout_ms`, after which their signal aborts. Default 30 000. */
  defaultTimeoutMs?: number;
  /**
   * Also announce the tools by Hermes's own protocol (at start, every `announceEveryMs`, when a
   * ToolBus asks), which only toolbuses older than `$SRV` discovery need. Default false: the
   * ToolBus finds the provider as a NATS micro service.
   */
  announce?: boolean;
  /** Also be a NATS micro service (`$SRV.PING/INFO/STATS/SCHEMA`, one endpoint per tool), which the ToolBus discovers. Default true. */
  micro?: boolean;
  /** The micro service's version (semver). Default `0.0.0`. */
  version?: string;
  /** Limits of the in-memory record of finished calls that makes a retried key a replay. */
  exactlyOnce?: CallMemoryOptions;
}

/** A running provider. */
export interface ToolProvider {
  readonly provider: string;
  readonly instanceId: string;
  /** The subject calls arrive on. */
  readonly subject: string;
  /**
   * Stops answering discovery (and announcing), stops taking calls and waits up to `timeoutMs`
   * (default 10 000) for those in flight to be answered; handlers still running then see their
   * signal abort. The ToolBus forgets the tools once no instance answered two discovery rounds
   * (with `announce: true`, once `ttlMs` also passed without an announcement).
   */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Hosts tools on the bus as a NATS micro service, which the ToolBus discovers (`$SRV.PING`/`INFO`,
 * specs in the endpoints' metadata), one endpoint per tool, and answers calls there and on
 * `<prefix>.tools.exec.<provider>` in queue groups shared by every instance of the provider (with
 * `announce: true` it also announces the tools, for toolbuses older than discovery). A call whose idempotency key is running waits
 * for that run, and one whose key has finished gets the remembered result: the handler runs at
 * most once per key while this process lives (see docs/tools.md for what survives a crash).
 * Resolves once the provider's subscriptions are registered with the server.
 */
export async function hostToolProvider(opts: HostToolProviderOptions): Promise<ToolProvider> {
  const { nc, provider } = opts;
  const subjects = subjectsFor(opts.prefix);
  if (!PROVIDER_NAME.test(provider)) throw new ToolProviderConfigError(provider, `the name must match ${PROVIDER_NAME}`);
  const ttlMs = opts.ttlMs ?? 30_000;
  if (!Number.isInteger(ttlMs) || ttlMs < 1000) throw new ToolProviderConfigError(provider, 'ttlMs must be an integer of at least 1000');
  const announceEveryMs = opts.announceEveryMs ?? Math.floor(ttlMs / 3);
  if (!(announceEveryMs > 0) || announceEveryMs >= ttlMs) {
    throw new ToolProviderConfigError(provider, 'announceEveryMs must be positive and below ttlMs, or the tools expire between announcements');
  }
  if (!(opts.announce ?? false) && !(opts.micro ?? true)) {
    throw new ToolProviderConfigError(provider, 'with micro: false the provider must announce (announce: true), or no ToolBus finds it');
  }
  const specs = checkedSpecs(provider, opts.tools);
  const announcement: ToolProviderAnnouncement = { provider, instance_id: opts.instanceId ?? randomUUID(), tools: specs, ttl_ms: ttlMs };
  const log = (opts.logger ?? silentLogger).child({ tool_provider: provider, instance_id: announcement.instance_id });
  const announcementBytes = new TextEncoder().encode(JSON.stringify(announcement));

  const stopping = new AbortController();
  // Every call in flight listens for the stop (and stops listening when it ends): more than ten at
  // once is normal load, not the leak Node's warning suspects.
  setMaxListeners(0, stopping.signal);
  const responder = new ExecResponder({
    nc,
    logger: log,
    provider,
    tools: new Map(opts.tools.map((tool, i) => [specs[i]!.name, tool])),
    memory: new CallMemory(opts.exactlyOnce),
    defaultTimeoutMs: opts.defaultTimeoutMs ?? 30_000,
    stopping: stopping.signal,
  });
  const subject = subjects.toolExec(provider);
  const onError = (what: string) => (err: Error | null) => {
    if (err) log.error({ err }, `${what} subscription failed`);
  };
  const exec: Subscription = nc.subscribe(subject, {
    queue: subjects.queueGroup(`tool-provider.${provider}`),
    callback: (err, msg) => (err ? onError('tool exec')(err) : responder.handle(msg)),
  });

  const micro =
    (opts.micro ?? true)
      ? new MicroResponder({
          nc,
          logger: log,
          identity: { name: provider, id: announcement.instance_id, version: opts.version ?? '0.0.0', description: `Hermes tool provider ${provider}` },
          endpoints: specs.map((spec) => ({ name: spec.name, subject: subjects.toolExecEndpoint(provider, spec.name), spec })),
          handle: (msg, done) => responder.handle(msg, done),
        })
      : undefined;
  micro?.start();

  let announcing = opts.announce ?? false;
  const announce = () => {
    if (!announcing) return;
    try {
      // Checked against the announcement contract when built (checkedSpecs); the ToolBus validates it again.
      // On the provider's own subject: the only one its NATS user may announce on, and the only one the toolbus takes its name from.
      nc.publish(subjects.toolProviderAnnounce(provider), announcementBytes);
    } catch (err) {
      log.warn({ err }, 'could not announce tools');
    }
  };
  // Every instance answers a discover (no queue group): the ToolBus wants to hear from all of them.
  const discover: Subscription | undefined = announcing
    ? nc.subscribe(subjects.toolProvidersDiscover, { callback: (err) => (err ? onError('discover')(err) : announce()) })
    : undefined;
  // Calls routed right after the first announcement (or discovery) must find the subscriptions in place.
  await nc.flush();
  announce();
  const timer = announcing ? setInterval(announce, announceEveryMs) : undefined;
  timer?.unref();
  log.info({ tools: specs.map((s) => s.name), subject, announce: announcing, ...(announcing ? { ttl_ms: ttlMs } : {}) }, 'hosting tools');

  let stopped: Promise<void> | undefined;
  return {
    provider,
    instanceId: announcement.instance_id,
    subject,
    stop(timeoutMs = 10_000) {
      stopped ??= (async () => {
        announcing = false;
        clearInterval(timer);
        if (!nc.isClosed()) {
          discover?.unsubscribe();
          await micro?.stop();
          // drain() lets calls already delivered to this instance through, then unsubscribes.
          await exec.drain().catch((err: unknown) => log.warn({ err }, 'could not drain the tool exec subscription'));
        }
        const grace = new AbortController();
        await Promise.race([responder.settled(), sleep(timeoutMs, undefined, { signal: grace.signal }).catch(() => undefined)]);
        grace.abort();
        stopping.abort();
        log.info('stopped hosting tools');
      })();
      return stopped;
    },
  };
}
