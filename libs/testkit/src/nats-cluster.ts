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

/**
 * Starts `size` nats-server processes with JetStream, routed into one cluster. Ports are chosen
 * once, so a node killed and restarted (`nodes[i].restart()`) comes back with its routes, its
 * store and its name, as a pod of a StatefulSet does.
 */
export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  const size = options.size ?? 3;
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })));
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`);
  const nodes = await Promise.all(
    ports.map((p, i) =>
      startNatsServer({
        port: p.client,
        startTimeoutMs: timeoutMs,
        configText: [
          `server_name: n${i + 1}`,
          `cluster { name: ${CLUSTER_NAME}, listen: "127.0.0.1:${p.route}", routes: [${routes.filter((_, j) => j !== i).map((r) => JSON.stringify(r)).join(', ')}] }`,
          options.configText ?? '',
        ].join('\n'),
      }),
    ),
  );
  const cluster: NatsClusterHandle = {
    nodes,
    url: nodes.map((n) => n.url).join(','),
    async waitForMetaLeader(waitMs = timeoutMs) {
      const deadline = Date.now() + waitMs;
      // Every node logs the leader it learns of; a node that restarted logs it again.
      while (!nodes.every((n) => n.logs.some((l) => /JetStream cluster new metadata leader|Self is new JetStream cluster metadata leader/.test(l)))) {
        if (Date.now() > deadline) throw new Error(`no JetStream meta leader within ${waitMs} ms`);
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
