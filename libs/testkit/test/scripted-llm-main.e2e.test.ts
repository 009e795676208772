import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupAll, freePort, startChildService } from '../src/index.js';
import { builtFile } from './built-dist.js';

afterEach(async () => {
  await cleanupAll();
});

describe('scripted-llm-main (the offline demo model)', () => {
  it('prints its baseUrl as JSON, answers as the demo model, and exits cleanly on SIGTERM', async () => {
    const port = await freePort();
    const llm = await startChildService({ name: 'demo-llm', entry: builtFile('scripted-llm-main.js'), args: ['--port', String(port)] });
    const line = await llm.waitForLog(/baseUrl/);
    const { baseUrl } = JSON.parse(line) as { baseUrl: string };
    expect(baseUrl).toBe(`http://127.0.0.1:${port}/v1`);

    const client = new OpenAI({ baseURL: baseUrl, apiKey: 'demo', maxRetries: 0 });
    const ask = async () =>
      (await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'Plan my trip' }] })).choices[0]?.message.content;
    const answer = await ask();
    expect(answer).toMatch(/scripted demo model/i);
    expect(answer).toContain('Plan my trip');
    expect(await ask()).toBe(answer);

    expect(await llm.stop()).toEqual({ code: 0, signal: null });
  });

  it('picks a free port by itself and rejects a bad --port', async () => {
    const llm = await startChildService({ name: 'demo-llm', entry: builtFile('scripted-llm-main.js') });
    const { baseUrl } = JSON.parse(await llm.waitForLog(/baseUrl/)) as { baseUrl: string };
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

    const bad = await startChildService({ name: 'bad-llm', entry: builtFile('scripted-llm-main.js'), args: ['--port', 'nope'] });
    expect((await bad.exited).code).toBe(2);
    expect(bad.logs.join('\n')).toContain('--port must be a non-negative integer');
  });
});
