import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsHandles } from '@hermes/bus/internal';
import { eventually } from '@hermes/testkit';
import { startStack, type Stack } from './stack.js';
import { callTools, ModelScript, toolMessages } from './model-script.js';
import { hermesCli, waitForToolList } from './tool-fixtures.js';

// The Go examples (examples/go/): a tool provider written with nats.go's micro package and a task
// submitter, built with Debian's golang-go and golang-github-nats-io-go-nats-dev (offline, GOPATH
// mode) and run against the real stack. The provider announces nothing: the toolbus finds it as a
// NATS micro service, every DISCOVERY_MS here.
const DISCOVERY_MS = 500;
const run = promisify(execFile);
const examples = fileURLToPath(new URL('../../examples/go/', import.meta.url));
const goEnv = { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off' };

async function goAvailable(): Promise<boolean> {
  try {
    await run('go', ['list', 'github.com/nats-io/nats.go/micro'], { env: goEnv });
    return true;
  } catch {
    return false;
  }
}

const hasGo = await goAvailable();
if (!hasGo) console.warn('go-examples.e2e: skipped, needs go and the nats.go sources (apt-get install golang-go golang-github-nats-io-go-nats-dev)');

describe.skipIf(!hasGo)('Go examples against the real stack', () => {
  let stack: Stack;
  let model: ModelScript;
  let bin: string;
  let provider: ChildProcess | undefined;
  let providerLog = '';

  beforeAll(async () => {
    bin = mkdtempSync(join(tmpdir(), 'teams-go-examples-'));
    const env = { ...goEnv, GOCACHE: join(bin, 'cache') };
    // Compiling is slow on a loaded 2-core machine; the deadline is generous for that, not a measurement.
    await run('go', ['build', '-o', join(bin, 'provider'), '.'], { cwd: join(examples, 'provider'), env, timeout: 180_000 });
    await run('go', ['build', '-o', join(bin, 'submitter'), '.'], { cwd: join(examples, 'submitter'), env, timeout: 180_000 });
    stack = await startStack({ env: { TOOL_SRV_DISCOVERY_INTERVAL_MS: String(DISCOVERY_MS) } });
    model = new ModelScript(stack.llm);
    provider = spawn(join(bin, 'provider'), { env: { ...process.env, NATS_URL: stack.natsUrl, PROVIDER_NAME: 'go-tools' } });
    provider.stderr!.on('data', (d: Buffer) => (providerLog += d.toString()));
    await eventually(
      () => providerLog.includes('go provider ready'),
      15_000,
      () => `the Go provider to start; it logged: ${providerLog}`,
    );
    // Found with zero announcements: $SRV.PING, $SRV.INFO, then its specs from $SRV.SCHEMA.
    await waitForToolList(stack.bus, { present: ['reverse_text'] }, 30_000);
  }, 400_000);

  afterAll(async () => {
    provider?.kill('SIGTERM');
    await stack?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  it('the Go submitter submits a task whose agent calls the Go provider’s tool, and reads the result', async () => {
    const goal = 'reverse the word hermes with the Go tool';
    model.on(goal, [callTools({ id: 'g1', name: 'reverse_text', arguments: { text: 'hermes' } }), { content: 'It is semreh.' }]);

    const { stdout } = await run(join(bin, 'submitter'), { env: { ...process.env, NATS_URL: stack.natsUrl, GOAL: goal }, timeout: 120_000 });
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const last = lines.at(-1) as { task_id: string; status: string; result: unknown };
    expect(lines[0]).toMatchObject({ task_id: last.task_id, ack: { stream: expect.any(String) } });
    expect(last.status).toBe('completed');
    expect(JSON.stringify(last.result)).toContain('It is semreh.');
    // The model was given the Go tool's own answer.
    const [toolReply] = toolMessages(model.requests(goal)[1]!.body);
    expect(toolReply!.content).toMatchObject({ ok: true, result: { reversed: 'semreh' } });
  });

  it('the Go provider is a standard NATS service: $SRV.PING and $SRV.INFO find it, $SRV.STATS counts its calls, hermes tools list shows them', async () => {
    const nc = natsHandles(stack.bus).nc;
    const ping = (await nc.request('$SRV.PING.go-tools', '', { timeout: 5000 })).json<{ name: string; id: string }>();
    expect(ping.name).toBe('go-tools');
    const info = (await nc.request(`$SRV.INFO.go-tools.${ping.id}`, '', { timeout: 5000 })).json<{ subject: string }>();
    expect(info.subject).toBe(stack.bus.subjects.toolExec('go-tools'));
    const stats = (await nc.request(`$SRV.STATS.go-tools.${ping.id}`, '', { timeout: 5000 })).json<{ num_requests: number; num_errors: number }>();
    expect(stats.num_requests).toBeGreaterThanOrEqual(1);
    expect(stats.num_errors).toBe(0);

    // hermes tools list shows the provider's tool and the service's own counters.
    const { stdout } = await hermesCli(stack.natsUrl, ['tools', 'list']);
    expect(stdout).toMatch(/^reverse_text\s+Reverses a text/m);
    expect(stdout).toMatch(new RegExp(`^go-tools 1\\.0\\.0  id=${ping.id}  requests=[1-9]\\d*  errors=0$`, 'm'));
    const json = JSON.parse((await hermesCli(stack.natsUrl, ['tools', 'list', '--json'])).stdout) as { services: { name: string; id: string }[] };
    expect(json.services).toContainEqual(expect.objectContaining({ name: 'go-tools', id: ping.id }));
  });

  it('a SIGSTOPped Go provider is dropped after missing two discovery rounds, and found again after SIGCONT', async () => {
    // Generous deadlines: a round is 500 ms, but the shared machine may run them late.
    provider!.kill('SIGSTOP');
    try {
      await waitForToolList(stack.bus, { absent: ['reverse_text'] }, 30_000);
    } finally {
      provider!.kill('SIGCONT');
    }
    await waitForToolList(stack.bus, { present: ['reverse_text'] }, 30_000);
    const goal = 'reverse the word again after the pause';
    model.on(goal, [callTools({ id: 'g2', name: 'reverse_text', arguments: { text: 'abc' } }), { content: 'cba.' }]);
    const { stdout } = await run(join(bin, 'submitter'), { env: { ...process.env, NATS_URL: stack.natsUrl, GOAL: goal }, timeout: 120_000 });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'completed' });
    const [toolReply] = toolMessages(model.requests(goal)[1]!.body);
    expect(toolReply!.content).toMatchObject({ ok: true, result: { reversed: 'cba' } });
  });
});
