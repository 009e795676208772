import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '@hermes/bus';
import { contracts, taskIdFor, type TaskListReply } from '@hermes/contracts';
import { eventually } from '@hermes/testkit';
import { sharedStack, type SharedStack } from './shared-stack.js';
import { callTools, ModelScript } from './model-script.js';

// The CLI's commands where a user id means a user of one team (`--team`), through every service
// as real processes on the shared stack: run, tasks, session and memory.
let stack: SharedStack;
let model: ModelScript;

beforeAll(async () => {
  stack = await sharedStack();
  model = new ModelScript(stack.llm);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

const cliEntry = fileURLToPath(new URL('../../tools/cli/dist/main.js', import.meta.url));
/** The built `hermes` bin, as a person runs it: exit code and both outputs, whatever the code. */
function hermes(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliEntry, ...args], { env: { ...process.env, NATS_URL: stack.natsUrl, ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('hermes with --team', () => {
  it("run --team submits as the team's user: tasks, session and memory commands with --team see it, the default team's same user id does not", async () => {
    const goal = 'cli team-c: remember that I take the night train';
    model.on(goal, [callTools({ id: 'r1', name: 'remember', arguments: { content: 'Carol takes the night train.' } }), { content: 'Noted for team-c.' }]);
    const run = await hermes(['run', goal, '--user', 'carol', '--team', 'team-c', '--session', 'cli-team-s']);
    expect(run.code).toBe(0);
    const taskId = /^task (t_[0-9a-f]{32})$/m.exec(run.stdout)?.[1];
    expect(taskId, run.stdout).toBeDefined();
    expect(run.stdout).toMatch(/completed/);
    // The dispatcher took the team from the subject the CLI published on.
    const view = await request(stack.bus, contracts.taskGet, { task_id: taskId! });
    expect(view).toMatchObject({ user_id: 'carol', team: 'team-c', status: 'completed' });
    // Its id is the team's: the same source and event id in the default team would be another task.
    expect(taskId).toBe(taskIdFor('team-c', view.source_event.source, view.source_event.id));
    expect(taskId).not.toBe(taskIdFor('default', view.source_event.source, view.source_event.id));

    const listed = JSON.parse((await hermes(['tasks', '--user', 'carol', '--team', 'team-c', '--json'])).stdout) as TaskListReply;
    expect(listed.tasks.map((t) => t.task_id)).toContain(taskId);
    const defaultCarol = JSON.parse((await hermes(['tasks', '--user', 'carol', '--json'])).stdout) as TaskListReply;
    expect(defaultCarol.tasks.map((t) => t.task_id)).not.toContain(taskId);
    // $HERMES_TEAM stands for --team.
    expect(
      (JSON.parse((await hermes(['tasks', '--user', 'carol', '--json'], { HERMES_TEAM: 'team-c' })).stdout) as TaskListReply).tasks.map((t) => t.task_id),
    ).toContain(taskId);

    expect((await hermes(['session', 'list', 'carol', '--team', 'team-c'])).stdout).toMatch(/^cli-team-s\s+2\s/m);
    expect((await hermes(['session', 'list', 'carol'])).stdout).not.toMatch(/cli-team-s/);
    expect((await hermes(['session', 'show', 'carol', 'cli-team-s', '--team', 'team-c'])).stdout).toMatch(/assistant\s+Noted for team-c\./);

    await eventually(
      async () => /Carol takes the night train/.test((await hermes(['memory', 'list', 'carol', '--team', 'team-c'])).stdout),
      10_000,
      "team-c carol's memory in hermes memory list",
    );
    expect((await hermes(['memory', 'list', 'carol'])).stdout).not.toMatch(/night train/);
  });

  it('refuses a --team that is not a team name before sending anything', async () => {
    for (const args of [
      ['run', 'goal', '--team', 'Team C'],
      ['tasks', '--team', 'a.b'],
      ['session', 'list', 'carol', '--team', '*'],
      ['memory', 'list', 'carol', '--team', '>'],
    ]) {
      const out = await hermes(args);
      expect([args.join(' '), out.code]).toEqual([args.join(' '), 2]);
      expect(out.stderr).toMatch(/--team must be a team name/);
    }
  });
});
