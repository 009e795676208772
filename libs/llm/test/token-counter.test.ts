import { describe, expect, it } from 'vitest';
import { MESSAGE_OVERHEAD_TOKENS, TOOL_OVERHEAD_TOKENS, countMessage, countText, countToolSchemas, encodingFor } from '../src/token-counter.js';

describe('token counting', () => {
  it('counts with the real BPE of the model family', () => {
    expect(countText('hello world, this is a test', 'o200k_base')).toBe(7);
    expect(countText('hello world, this is a test', 'cl100k_base')).toBe(7);
    // A long non-English string shows the difference between the two encodings.
    const text = 'Привет, как дела? Это проверка токенизатора.';
    expect(countText(text, 'o200k_base')).not.toBe(countText(text, 'cl100k_base'));
  });

  it('picks cl100k for GPT-4 and 3.5, o200k for 4o and newer and for unknown models', () => {
    expect(encodingFor('gpt-4')).toBe('cl100k_base');
    expect(encodingFor('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingFor('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingFor('gpt-4.1')).toBe('o200k_base');
    expect(encodingFor('openai/o3-mini')).toBe('o200k_base');
    expect(encodingFor('llama3.1:8b')).toBe('o200k_base');
  });

  it('counts a message as content plus tool calls plus the per-message overhead, and special tokens as text', () => {
    const plain = countMessage({ content: 'hi there' }, 'o200k_base');
    expect(plain).toBe(countText('hi there', 'o200k_base') + MESSAGE_OVERHEAD_TOKENS);
    const withCall = countMessage({ content: null, tool_calls: [{ name: 'web_search', arguments: '{"q":"dns"}' }] }, 'o200k_base');
    expect(withCall).toBe(MESSAGE_OVERHEAD_TOKENS + countText('web_search', 'o200k_base') + countText('{"q":"dns"}', 'o200k_base'));
    expect(countText('<|endoftext|>', 'o200k_base')).toBeGreaterThan(1);
  });

  it('counts tool schemas as their JSON plus a per-tool overhead, growing with the schema', () => {
    const small = { name: 'time_now', description: 'The current time.', parameters: { type: 'object', properties: {} } };
    const large = {
      name: 'file_write',
      description: 'Writes a file in the workspace, creating folders on the way.',
      parameters: {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: 40 }, (_, i) => [`field_${i}`, { type: 'string', description: `the ${i}th field of the record to write` }]),
        ),
      },
    };
    expect(countToolSchemas([], 'o200k_base')).toBe(0);
    expect(countToolSchemas([small], 'o200k_base')).toBe(TOOL_OVERHEAD_TOKENS + countText(JSON.stringify(small), 'o200k_base'));
    expect(countToolSchemas([small, large], 'o200k_base')).toBe(countToolSchemas([small], 'o200k_base') + countToolSchemas([large], 'o200k_base'));
    // 40 described properties are several hundred tokens: no constant fits both.
    expect(countToolSchemas([large], 'o200k_base')).toBeGreaterThan((20 * countToolSchemas([small], 'o200k_base')) / 2);
    expect(countToolSchemas([{ name: 'x', description: undefined }], 'o200k_base')).toBe(TOOL_OVERHEAD_TOKENS + countText('{"name":"x"}', 'o200k_base'));
  });
});
