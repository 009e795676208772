import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsCluster, type ChildService, type NatsClusterHandle, type NatsServerHandle } from '@hermes/testkit';
import { startStack, type Stack } from '../e2e/stack.js';
import { Ledger, startToolProvider } from '../e2e/tool-fixtures.js';
import { FaultModel, faultScale, runFault, saveReports, type FaultReport } from './fault-harness.js';
import { natsHandles } from '@hermes/bus/internal';

/**
 * Hermes on a 3-node JetStream cluster with every stream and bucket at R3 (HERMES_JS_REPLICAS=3):
 * losing any one node, the one leading the streams included, and restarting all three one after
 * another cost a leader election, never a task or a side effect.
 */
const scale = faultScale();
const reports: FaultReport[] = [];
let cluster: NatsClusterHandle;
let stack: Stack;
let ledger: Ledger;
let provider: ChildService;

beforeAll(async () => {
  cluster = await startNatsCluster();
  stack = await startStack({ natsUrl: cluster.url, runtimeAckWaitMs: 2000, env: { HERMES_JS_REPLICAS: '3' } });
  ledger = new Ledger();
  provider = await startToolProvider({ natsUrl: cluster.url, bus: stack.bus, ledger });
}, 180_000);

afterAll(async () => {
  saveReports(reports, 'cluster-faults');
  console.log(JSON.stringify(reports, null, 1));
  await provider?.stop(3000);
  await stack?.stop();
  await cluster?.stop();
  ledger?.remove();
});

/** The node that leads the task state bucket: the one whose loss a single-node setup could not survive. */
async function leaderOfTaskState(): Promise<NatsServerHandle> {
  const info = await natsHandles(stack.bus).jsm.streams.info(`KV_${stack.bus.subjects.buckets.tasks}`);
  const node = cluster.nodes.find((_, i) => info.cluster?.leader === `n${i + 1}`);
  if (!node) throw new Error(`no leader known for the task bucket: ${JSON.stringify(info.cluster)}`);
  return node;
}

async function fault(scenario: string, inject: () => Promise<void>): Promise<FaultReport> {
  const model = new FaultModel({ scale, varying: true });
  stack.llm.setResponder((req) => model.answer(req));
  const report = await runFault({ stack, ledger, model, scale, scenario, inject });
  reports.push(report);
  if (report.completed !== report.tasks) {
    // What the services said, for the post-mortem of a failed run.
    for (const [name, svc] of stack.services) console.log(`--- ${name}\n${svc.logs.slice(-12).join('\n')}`);
  }
  expect({ completed: report.completed, failed: report.failed, stuck: report.stuck }).toEqual({ completed: report.tasks, failed: [], stuck: 0 });
  expect(report.duplicate_keys).toBe(0);
  expect(report.wrong_effect_counts).toBe(0);
  // An LLM answer already paid for is checkpointed through the fault, never asked for again.
  expect(report.reasked_steps).toBe(0);
  expect(report.reasked_after_checkpoint).toBe(0);
  return report;
}

// Generous: elections and catch-up on a loaded 2-core machine, three nodes beside the services.
describe(`a 3-node cluster at R3 (${scale.tasks} tasks of ${scale.callsPerTask} side-effecting calls)`, { timeout: 300_000 }, () => {
  it('every stream and bucket Hermes declared has three replicas', async () => {
    const names: string[] = [];
    for await (const s of natsHandles(stack.bus).jsm.streams.list()) {
      expect(s.config.num_replicas, s.config.name).toBe(3);
      names.push(s.config.name);
    }
    expect(names).toContain(`KV_${stack.bus.subjects.buckets.tasks}`);
    expect(names).toContain(stack.bus.subjects.streams.runtimeJobs);
  });

  it('the node leading the task state killed with SIGKILL mid-run, back after 5 s', async () => {
    await fault('cluster: leader node killed', async () => {
      const node = await leaderOfTaskState();
      await node.kill();
      await new Promise((r) => setTimeout(r, 5000));
      await node.restart();
      await cluster.waitForMetaLeader();
    });
  });

  it('a rolling restart of all three nodes', async () => {
    await fault('cluster: rolling restart', async () => {
      for (const node of cluster.nodes) {
        await node.restart();
        await cluster.waitForMetaLeader();
        // Let the restarted node catch up before the next one goes, as a StatefulSet's readiness gate does.
        await new Promise((r) => setTimeout(r, 2000));
      }
    });
  });
});
