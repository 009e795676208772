import { describe, expect, it } from 'vitest';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { fromMcpError, McpRequestTimeoutError, McpServerUnavailableError } from '../src/mcp/mcp-errors.js';

describe('fromMcpError', () => {
  const ready = { server: 'files', state: 'ready' };

  it('a request timeout (also how the SDK reports an aborted request) is a retryable tool_timeout', () => {
    const mapped = fromMcpError(new McpError(ErrorCode.RequestTimeout, 'Request timed out'), ready);
    expect(mapped).toBeInstanceOf(McpRequestTimeoutError);
    expect(mapped).toMatchObject({ code: 'tool_timeout', retryable: true, server: 'files' });
  });

  it('a connection closed during the call is provider_unavailable', () => {
    const mapped = fromMcpError(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), ready);
    expect(mapped).toBeInstanceOf(McpServerUnavailableError);
    expect(mapped).toMatchObject({ code: 'provider_unavailable', retryable: true });
  });

  it('is decided by the code, not the wording: a server error whose text says "timed out" stays what it was', () => {
    const refusal = new McpError(ErrorCode.InvalidParams, 'the lookup timed out upstream');
    expect(fromMcpError(refusal, ready)).toBe(refusal);
    const plain = new Error('RequestTimeout');
    expect(fromMcpError(plain, ready)).toBe(plain);
  });

  it('any failure while the server is not ready is blamed on that', () => {
    const mapped = fromMcpError(new Error('write EPIPE'), { server: 'files', state: 'reconnecting' });
    expect(mapped).toBeInstanceOf(McpServerUnavailableError);
    expect((mapped as Error).message).toContain('it is reconnecting');
  });
});
