import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startScriptedLlm, type RecordedRequest } from '@hermes/testkit';
import { StepScript, plannedGoal, runIdOf } from './step-script.js';
import { MODEL_READY_PREFIX, MODEL_SETTINGS_ENV, type ModelReady, type ModelSettings, type ModelStats } from './model-process.js';

// The step-overhead benchmark's model, in a process of its own so that nothing else the bench
// does (following task events, the direct loop) shares its event loop. It answers at once,
// records when each request arrived, and hands those times out over a small HTTP side door.
const settings = JSON.parse(process.env[MODEL_SETTINGS_ENV] ?? 'null') as ModelSettings | null;
if (!settings) throw new Error(`${MODEL_SETTINGS_ENV} is not set; this process is started by the step-overhead benchmark`);

const script = new StepScript(settings);
const firstRequests = new Map<string, RecordedRequest['body']>();
// Calls by kind and by second of arrival: the load benchmarks' view of what reached the model.
const calls: ModelStats['calls'] = { plan: 0, step: 0, background: 0, other: 0 };
const perSecond = new Map<number, number>();
const llm = await startScriptedLlm({
  ...(settings.latencyMs ? { latencyMs: settings.latencyMs } : {}),
  responder: (req) => {
    const runId = runIdOf(req.body);
    calls[callKind(req.body, runId)]++;
    const second = Math.floor(Date.now() / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    // The loop's first request, not the planning call before it: the direct loop replays its shape.
    if (runId !== undefined && plannedGoal(req.body) === undefined && !firstRequests.has(runId)) firstRequests.set(runId, req.body);
    return script.responder(req);
  },
});

const control = createServer((req, res) => {
  const [, what, runId] = (req.url ?? '').split('/');
  const body =
    what === 'arrivals'
      ? script.arrivalsOf(runId ?? '')
      : what === 'first-request'
        ? (firstRequests.get(runId ?? '') ?? null)
        : what === 'stats'
          ? ({ calls, in_flight: llm.inFlight, max_in_flight: llm.maxInFlight, per_second: [...perSecond].sort((a, b) => a[0] - b[0]) } satisfies ModelStats)
          : undefined;
  res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? null));
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));

const ready: ModelReady = { baseUrl: llm.baseUrl, controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}` };
process.stdout.write(`${MODEL_READY_PREFIX}${JSON.stringify(ready)}\n`);

/** Planning calls, agent steps (they offer tools), and the memory service's summaries and extraction (they do not). */
function callKind(body: RecordedRequest['body'], runId: string | undefined): keyof ModelStats['calls'] {
  if (plannedGoal(body) !== undefined) return 'plan';
  if (runId === undefined) return 'other';
  return body.tools?.length ? 'step' : 'background';
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    control.close();
    control.closeAllConnections();
    void llm.close().then(() => process.exit(0));
  });
}
