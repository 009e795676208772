import { connect } from 'node:net';

const COMMAND_TIMEOUT_MS = 5_000;

const encode = (command: readonly string[]): string => `*${command.length}\r\n${command.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;

/** Where the RESP2 reply starting at `at` ends in `text`, or undefined while it is incomplete. */
function replyEnd(text: string, at: number): number | undefined {
  const lineEnd = text.indexOf('\r\n', at);
  if (lineEnd < 0) return undefined;
  const kind = text[at];
  const n = Number(text.slice(at + 1, lineEnd));
  if (kind === '$') {
    if (n < 0) return lineEnd + 2;
    const end = lineEnd + 2 + n + 2;
    return Buffer.byteLength(text) >= end ? end : undefined;
  }
  if (kind === '*') {
    let next: number | undefined = lineEnd + 2;
    for (let i = 0; i < n && next !== undefined; i++) next = replyEnd(text, next);
    return next;
  }
  return lineEnd + 2;
}

/**
 * Sends one RESP command to 127.0.0.1:port and resolves with the server's reply as it came over
 * the wire (`+PONG\r\n`, `$5\r\nhello\r\n`, ...). A client of its own, so the kit needs no Redis
 * library; Sentinel mode knows no QUIT, so it closes once the reply is complete. Rejects when
 * nothing listens or no whole reply comes within 5 s. Replies are expected to be ASCII.
 */
export async function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    socket.setTimeout(COMMAND_TIMEOUT_MS, () =>
      socket.destroy(new Error(`redis command ${args[0] ?? ''} on port ${port}: no whole answer within ${COMMAND_TIMEOUT_MS} ms`)),
    );
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`redis command ${args[0] ?? ''} on port ${port}: connection closed before the answer`)));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const end = replyEnd(received, 0);
      if (end === undefined) return;
      resolve(received.slice(0, end));
      socket.destroy();
    });
    socket.write(encode(args));
  });
}
