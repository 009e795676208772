import { ProcessStartError, TestkitError } from './errors.js';
import { freePort } from './free-port.js';
import { startNatsServer, type NatsServerHandle } from './nats-server.js';

/** Options for {@link startNatsCluster}. */
export interface NatsClusterOptions {
  /** Number of nodes. Default 3 (the smallest cluster that keeps R3 data through one node's loss). */
  size?: number;
  /** Extra configuration for every node (accounts, authorization); see NatsServerOptions.configText. */
  configText?: string;
  /** How long to wait for the nodes and a JetStream meta leader. Default 30 s. */
  startTimeoutMs?: number;
  /** Where client and route ports come from. Default: freePort (a test of the kit hands out a taken one). */
  choosePort?: () => Promise<number>;
}

/** A JetStream cluster on loopback: each node a nats-server process with its own store, routed to the others. */
export interface NatsClusterHandle {
  readonly nodes: readonly NatsServerHandle[];
  /** Every node's client URL, comma-separated, as NATS_URL takes them. */
  readonly url: string;
  /** Waits until the nodes agree on a JetStream meta leader (after a start or a node's return). */
  waitForMetaLeader(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const CLUSTER_NAME = 'hermes-test';
/** Whole-cluster starts tried when a chosen port was taken before its node bound it. */
const PORT_CLASH_ATTEMPTS = 4;

/** The nodes started but never agreed on a JetStream meta leader. */
export class NoMetaLeaderError extends TestkitError {
  constructor(message: string) {
    super('TESTKIT_NO_META_LEADER', message);
  }
}

/**
 * Starts `size` nats-server processes with JetStream, routed into one cluster. Ports are chosen
 * once, so a node killed and restarted (`nodes[i].restart()`) comes back with its routes, its
 * store and its name, as a pod of a StatefulSet does. Every node's routes name every other node's
 * route port, so the ports are chosen before any node starts and cannot be reserved: when another
 * process takes one first, the nodes started are stopped and the cluster is started again on new ports.
 */
export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      const clash = err instanceof ProcessStartError && /address already in use/i.test(err.message);
      // On a starved machine (the whole suite on 2 cores) a fresh cluster has twice failed to elect
      // its meta leader within the wait while the same start alone takes ~1 s: a new cluster is
      // cheaper than a longer wait on one that may be stuck in elections.
      const noLeader = err instanceof NoMetaLeaderError;
      if (!(clash || noLeader) || attempt >= PORT_CLASH_ATTEMPTS) throw err;
    }
  }
}

async function startOnce(options: NatsClusterOptions): Promise<NatsClusterHandle> {
  const size = options.size ?? 3;
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const choose = options.choosePort ?? freePort;
  const ports: { client: number; route: number }[] = [];
  for (let i = 0; i < size; i++) ports.push({ client: await choose(), route: await choose() });
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`);
  const started = await Promise.allSettled(
    ports.map((p, i) =>
      startNatsServer({
        port: p.client,
        startTimeoutMs: timeoutMs,
        readyLogLine: /Listening for route connections/,
        configText: [
          `server_name: n${i + 1}`,
          `cluster { name: ${CLUSTER_NAME}, listen: "127.0.0.1:${p.route}", routes: [${routes
            .filter((_, j) => j !== i)
            .map((r) => JSON.stringify(r))
            .join(', ')}] }`,
          options.configText ?? '',
        ].join('\n'),
      }),
    ),
  );
  const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw failed.reason;
  }
  const cluster: NatsClusterHandle = {
    nodes,
    url: nodes.map((n) => n.url).join(','),
    async waitForMetaLeader(waitMs = timeoutMs) {
      const deadline = Date.now() + waitMs;
      // Every node logs the leader it learns of; a node that restarted logs it again.
      while (!nodes.every((n) => n.logs.some((l) => /JetStream cluster new metadata leader|Self is new JetStream cluster metadata leader/.test(l)))) {
        if (Date.now() > deadline) {
          const tails = nodes.map((n, i) => `--- n${i + 1} (port ${n.port}) ---\n${n.logs.slice(-8).join('\n')}`);
          throw new NoMetaLeaderError(`no JetStream meta leader within ${waitMs} ms\n${tails.join('\n')}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
  try {
    await cluster.waitForMetaLeader();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
