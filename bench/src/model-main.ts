import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startScriptedLlm, type RecordedRequest } from '@hermes/testkit';
import { StepScript, plannedGoal, runIdOf, type StepTool } from './step-script.js';
import { MODEL_READY_PREFIX, MODEL_SETTINGS_ENV, type ModelReady } from './model-process.js';

// The step-overhead benchmark's model, in a process of its own so that nothing else the bench
// does (following task events, the direct loop) shares its event loop. It answers at once,
// records when each request arrived, and hands those times out over a small HTTP side door.
const settings = JSON.parse(process.env[MODEL_SETTINGS_ENV] ?? 'null') as { steps: number; tool: StepTool } | null;
if (!settings) throw new Error(`${MODEL_SETTINGS_ENV} is not set; this process is started by the step-overhead benchmark`);

const script = new StepScript(settings);
const firstRequests = new Map<string, RecordedRequest['body']>();
const llm = await startScriptedLlm({
  responder: (req) => {
    const runId = runIdOf(req.body);
    // The loop's first request, not the planning call before it: the direct loop replays its shape.
    if (runId !== undefined && plannedGoal(req.body) === undefined && !firstRequests.has(runId)) firstRequests.set(runId, req.body);
    return script.responder(req);
  },
});

const control = createServer((req, res) => {
  const [, what, runId] = (req.url ?? '').split('/');
  const body = what === 'arrivals' ? script.arrivalsOf(runId ?? '') : what === 'first-request' ? (firstRequests.get(runId ?? '') ?? null) : undefined;
  res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? null));
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));

const ready: ModelReady = { baseUrl: llm.baseUrl, controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}` };
process.stdout.write(`${MODEL_READY_PREFIX}${JSON.stringify(ready)}\n`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    control.close();
    control.closeAllConnections();
    void llm.close().then(() => process.exit(0));
  });
}
