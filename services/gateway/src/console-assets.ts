import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { HttpError } from './http-errors.js';

/** Where the console's files are: the pages and styles as written, the scripts as `npm run build` compiled them. */
const STATIC_DIR = new URL('../console/static/', import.meta.url);
const SCRIPT_DIR = new URL('../dist/console/', import.meta.url);

const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8' };

/**
 * The console's own pages load only from the gateway (no CDN, no inline script), may not be
 * framed, and send no referrer (a task id in the hash stays on the page).
 */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export interface ConsoleAssets {
  /** Answers a GET under /console; a name that is not one of its files is 404. */
  serve(path: string, res: ServerResponse): Promise<void>;
}

/** The console (`/console`): static files and its config (the tracing UI's URL template). */
export function consoleAssets(opts: { traceUrlTemplate?: string | undefined }): ConsoleAssets {
  const config = JSON.stringify({ traceUrlTemplate: opts.traceUrlTemplate ?? null });
  return {
    async serve(path, res) {
      if (path === '/console') {
        res.writeHead(308, { location: '/console/' }).end();
        return;
      }
      const name = path.slice('/console/'.length) || 'index.html';
      if (name === 'config.json') {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS }).end(config);
        return;
      }
      // One flat name of a known kind: nothing like "../" can reach outside the two folders.
      const kind = /^[a-z0-9-]+\.(html|css|js)$/.exec(name)?.[1];
      if (!kind) throw new HttpError(404, { code: 'not_found', message: `no console file ${name}` });
      const body = await readFile(new URL(name, kind === 'js' ? SCRIPT_DIR : STATIC_DIR)).catch(() => undefined);
      if (!body) throw new HttpError(404, { code: 'not_found', message: `no console file ${name}` });
      res.writeHead(200, { 'content-type': TYPES[kind]!, 'content-length': body.length, 'cache-control': 'no-cache', ...SECURITY_HEADERS }).end(body);
    },
  };
}
