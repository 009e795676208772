import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isNonPublicAddress } from './address-guard.js';
import { ToolArgumentError, ToolRefusedError } from './toolbus-errors.js';
import type { BuiltinTool } from './tool-types.js';

export interface HttpGetOptions {
  /** Host names (or `host:port`, or `*.example.com`) the tool may fetch from; empty = none. */
  allowedHosts: readonly string[];
  /** Let allowed hosts resolve to loopback/private/link-local addresses (tests, on-premise intranets). */
  allowPrivate: boolean;
  /** Bytes of a response body read at most; the rest is not downloaded. */
  maxBytes: number;
}

const DEFAULT_MAX_CHARS = 8000;
const TEXTUAL = /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|yaml|x-yaml|rss\+xml|atom\+xml)|[^;]*\+json|[^;]*\+xml)/i;

/** Fetches a web page or API response from an operator-approved host and returns it as text. */
export function httpGetTool(o: HttpGetOptions): BuiltinTool {
  return {
    spec: {
      name: 'http_get',
      description:
        'Fetches a URL with HTTP GET and returns the status, the content type and the body as text (cut to max_chars). Only hosts the operator allowed can be fetched; redirects are not followed (the Location is returned).',
      parameters: {
        type: 'object',
        properties: {
          url: { type: 'string', format: 'uri', maxLength: 2048, description: 'absolute http:// or https:// URL' },
          max_chars: { type: 'integer', minimum: 100, maximum: 100_000, description: `characters of the body to return (default ${DEFAULT_MAX_CHARS})` },
        },
        required: ['url'],
        additionalProperties: false,
      },
      timeout_ms: 15_000,
    },
    async run(args, ctx) {
      const url = new URL(String(args.url));
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new ToolArgumentError([
          { path: '/url', message: 'must be an http or https URL', expected: 'string (http:// or https:// URL)', got: JSON.stringify(args.url) },
        ]);
      }
      const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
      checkAllowed(o.allowedHosts, hostname, url.host);
      if (isIP(hostname) && !o.allowPrivate && isNonPublicAddress(hostname)) {
        throw new ToolRefusedError(`refused: ${hostname} is a private, loopback or link-local address`);
      }
      const res = await get(url, guardedLookup(o.allowPrivate), ctx.signal);
      const maxChars = typeof args.max_chars === 'number' ? args.max_chars : DEFAULT_MAX_CHARS;
      return readBody(url, res, o.maxBytes, maxChars);
    },
  };
}

function checkAllowed(allowed: readonly string[], hostname: string, host: string): void {
  if (allowed.length === 0) {
    throw new ToolRefusedError('http_get is disabled: no host is allowed (the operator has not set TOOL_HTTP_ALLOWED_HOSTS)');
  }
  const name = hostname.toLowerCase();
  const ok = allowed.some((entry) => {
    const e = entry.toLowerCase();
    return e === name || e === host.toLowerCase() || (e.startsWith('*.') && name.endsWith(e.slice(1)));
  });
  if (!ok) throw new ToolRefusedError(`refused: host "${hostname}" is not allowed; allowed hosts: ${allowed.join(', ')}`);
}

/** Resolves names itself, so the address checked is the address connected to (no DNS rebinding in between). */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, ...(options.family ? { family: options.family } : {}) }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const blocked = allowPrivate ? undefined : addresses.find((a) => isNonPublicAddress(a.address));
      if (blocked)
        return callback(new ToolRefusedError(`refused: ${hostname} resolves to a private, loopback or link-local address (${blocked.address})`), '', 0);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

function get(url: URL, lookup: LookupFunction, signal: AbortSignal): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      { method: 'GET', lookup, signal, headers: { 'user-agent': 'hermes-toolbus/1 (+http_get tool)', accept: 'text/*, application/json;q=0.9, */*;q=0.5' } },
      resolve,
    );
    req.on('error', (err) =>
      reject(err instanceof ToolRefusedError ? err : new ToolRefusedError(`could not fetch ${url.href}: ${err.message}`, { cause: err })),
    );
    req.end();
  });
}

async function readBody(url: URL, res: IncomingMessage, maxBytes: number, maxChars: number): Promise<Record<string, unknown>> {
  const contentType = res.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  let bytes = 0;
  let cut = false;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (bytes + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - bytes));
      bytes = maxBytes;
      cut = true;
      res.destroy();
      break;
    }
    chunks.push(chunk);
    bytes += chunk.length;
  }
  const out: Record<string, unknown> = { url: url.href, status: res.statusCode ?? 0, content_type: contentType, bytes_read: bytes };
  if (res.headers.location) out.location = res.headers.location;
  if (contentType !== '' && !TEXTUAL.test(contentType)) {
    out.text = null;
    out.note = 'the body is not text and is not returned';
    return out;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  out.text = text.length > maxChars ? text.slice(0, maxChars) : text;
  out.truncated = cut || text.length > maxChars;
  return out;
}
