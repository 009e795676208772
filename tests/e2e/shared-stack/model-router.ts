import { request, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * The shared stack's model endpoint: every chat request of its services is forwarded to the
 * scripted model of the test file that holds the stack right now, so each file scripts, records
 * and counts its own model as it would on a stack of its own. Files take turns (the e2e project
 * runs them one at a time). With no file holding it, a request (a memory service's extraction of
 * the last file's sessions) goes to `idlePort`, a scripted model with the default answers, as on
 * a stack of its own: an error there would count as a provider failure and back the shared LLM
 * pool off for the next file.
 */
export class ModelRouter {
  private target: number | undefined;

  constructor(private readonly idlePort: number) {}

  /** Sends the model's traffic to the scripted model on this port from now on. */
  hold(port: number): void {
    this.target = port;
  }

  /** Stops forwarding to `port`, unless another file took over meanwhile. */
  release(port: number): void {
    if (this.target === port) this.target = undefined;
  }

  forward(req: IncomingMessage, res: ServerResponse): void {
    const upstream = request({ host: '127.0.0.1', port: this.target ?? this.idlePort, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.once('error', () => (res.headersSent ? res.destroy() : sendError(res, 502, 'the scripted model went away')));
    // A service that gives up on its call (a cancelled task) must abort the scripted model's answer too.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}

function sendError(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ error: { message, type: 'server_error', code: null } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
