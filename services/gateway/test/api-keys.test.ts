import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@hermes/config';
import { describe, expect, it } from 'vitest';
import { createAuthenticator, gatewaySettings, loadApiKeys } from '../src/index.js';

const KEY = 'k-0123456789abcdef';
const keysJson = JSON.stringify([{ key: KEY, user_id: 'alice', roles: ['admin'] }]);

function writeKeyFile(content: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gateway-keys-')), 'keys.json');
  writeFileSync(file, content);
  return file;
}

describe('gateway settings', () => {
  it('apply defaults and parse HERMES_API_KEYS from JSON', () => {
    const config = loadConfig(gatewaySettings, { service: 'gateway', env: { HERMES_API_KEYS: keysJson } });
    expect(config).toMatchObject({ GATEWAY_PORT: 8080 });
    expect(config.GATEWAY_HOST).toBeUndefined();
    expect(loadApiKeys(config)).toEqual([{ key: KEY, user_id: 'alice', roles: ['admin'] }]);
  });

  it('refuse to start without any API keys, naming the settings', () => {
    expect(() => loadConfig(gatewaySettings, { service: 'gateway', env: {} })).toThrow(/HERMES_API_KEYS[\s\S]*HERMES_API_KEYS_FILE/);
  });

  it('refuse an empty key list and a short key', () => {
    expect(() => loadConfig(gatewaySettings, { service: 'gateway', env: { HERMES_API_KEYS: '[]' } })).toThrow(ConfigError);
    const short = JSON.stringify([{ key: 'secret', user_id: 'alice', roles: [] }]);
    expect(() => loadConfig(gatewaySettings, { service: 'gateway', env: { HERMES_API_KEYS: short } })).toThrow(/at least 16|fewer than 16/);
  });
});

describe('loadApiKeys', () => {
  it('reads keys from HERMES_API_KEYS_FILE', () => {
    const file = writeKeyFile(keysJson);
    expect(loadApiKeys({ HERMES_API_KEYS_FILE: file })).toHaveLength(1);
  });

  it('reports an unreadable or invalid key file as a config error', () => {
    expect(() => loadApiKeys({ HERMES_API_KEYS_FILE: '/nonexistent/keys.json' })).toThrow(ConfigError);
    const bad = writeKeyFile(JSON.stringify([{ key: KEY, user_id: 'has space', roles: [] }]));
    expect(() => loadApiKeys({ HERMES_API_KEYS_FILE: bad })).toThrow(/HERMES_API_KEYS_FILE\.0\.user_id/);
  });

  it('rejects a key listed twice', () => {
    const file = writeKeyFile(keysJson);
    expect(() => loadApiKeys({ HERMES_API_KEYS: JSON.parse(keysJson), HERMES_API_KEYS_FILE: file })).toThrow(/listed twice/);
  });
});

describe('createAuthenticator', () => {
  const authenticate = createAuthenticator([
    { key: KEY, user_id: 'alice', roles: ['user'] },
    { key: `${KEY}-ops`, user_id: 'ops', roles: ['admin'] },
  ]);

  it('maps a bearer key to its user and roles', () => {
    expect(authenticate(`Bearer ${KEY}`)).toEqual({
      ok: true,
      caller: { user_id: 'alice', team: 'default', roles: ['user'], isAdmin: false, approves: 'own' },
    });
    expect(authenticate(`bearer ${KEY}-ops`)).toMatchObject({ ok: true, caller: { user_id: 'ops', isAdmin: true } });
  });

  it('tells a missing header from an unknown key', () => {
    expect(authenticate(undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(authenticate(`Basic ${KEY}`)).toEqual({ ok: false, reason: 'missing' });
    expect(authenticate(`Bearer ${KEY}x`)).toEqual({ ok: false, reason: 'invalid' });
    expect(authenticate(`Bearer ${KEY.slice(0, -1)}`)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('lets an approver role decide the whole team, and with approver roles set, nobody else', () => {
    const withRoles = createAuthenticator(
      [
        { key: KEY, user_id: 'alice', roles: ['user'] },
        { key: `${KEY}-carol`, user_id: 'carol', roles: ['user', 'approver'] },
        { key: `${KEY}-ops`, user_id: 'ops', roles: ['admin'] },
      ],
      ['approver'],
    );
    expect(withRoles(`Bearer ${KEY}`)).toMatchObject({ caller: { user_id: 'alice', approves: 'none' } });
    expect(withRoles(`Bearer ${KEY}-carol`)).toMatchObject({ caller: { user_id: 'carol', approves: 'team', isAdmin: false } });
    expect(withRoles(`Bearer ${KEY}-ops`)).toMatchObject({ caller: { approves: 'team' } });
    expect(authenticate(`Bearer ${KEY}-ops`)).toMatchObject({ caller: { approves: 'team' } });
  });
});
