import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { ConfigError, commonSettings, loadConfig } from '@hermes/config';

const dir = mkdtempSync(join(tmpdir(), 'hermes-config-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const settings = Type.Object({
  PORT: Type.Integer({ default: 8080, minimum: 1, maximum: 65535, description: 'HTTP port' }),
  RATIO: Type.Number({ default: 0.5 }),
  ENABLED: Type.Boolean({ default: false }),
  NAME: Type.String({ default: 'hermes' }),
  API_KEY: Type.String({ minLength: 1, description: 'key for the upstream API' }),
  LIMITS: Type.Object({ rpm: Type.Integer({ minimum: 1 }), burst: Type.Optional(Type.Integer()) }, { default: { rpm: 60 } }),
  ORIGINS: Type.Array(Type.String(), { default: [] }),
  MODE: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('safe')])),
});

function load(env: Record<string, string>, file?: string) {
  return loadConfig(settings, { service: 'svc', env, ...(file ? { file } : {}) });
}

function problemsOf(fn: () => unknown): { setting: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig from the environment', () => {
  it('coerces integers, numbers and booleans from strings', () => {
    const config = load({ API_KEY: 'k', PORT: '9090', RATIO: '0.25', ENABLED: 'true' });

    expect(config).toMatchObject({ PORT: 9090, RATIO: 0.25, ENABLED: true });
    expect(load({ API_KEY: 'k', ENABLED: 'false' }).ENABLED).toBe(false);
  });

  it('applies defaults to unset and empty settings', () => {
    const config = load({ API_KEY: 'k', PORT: '', NAME: '' });

    expect(config).toEqual({ API_KEY: 'k', PORT: 8080, RATIO: 0.5, ENABLED: false, NAME: 'hermes', LIMITS: { rpm: 60 }, ORIGINS: [] });
    expect(config.MODE).toBeUndefined();
  });

  it('parses object and array settings as JSON', () => {
    const config = load({ API_KEY: 'k', LIMITS: '{"rpm": 10, "burst": 3}', ORIGINS: '["https://a.example", "https://b.example"]', MODE: 'safe' });

    expect(config.LIMITS).toEqual({ rpm: 10, burst: 3 });
    expect(config.ORIGINS).toEqual(['https://a.example', 'https://b.example']);
    expect(config.MODE).toBe('safe');
  });

  it('reads only the settings the schema declares', () => {
    const config = load({ API_KEY: 'k', UNRELATED: 'x', PATH: '/usr/bin' });

    expect(config).not.toHaveProperty('UNRELATED');
    expect(config).not.toHaveProperty('PATH');
  });

  it('names every bad setting in one ConfigError', () => {
    const problems = problemsOf(() => load({ PORT: 'eighty', RATIO: 'half', ENABLED: 'yes', LIMITS: '{rpm: 10}', ORIGINS: '"not an array"', MODE: 'slow' }));

    const named = new Set(problems.map((p) => p.setting));
    expect([...named].sort()).toEqual(['API_KEY', 'ENABLED', 'LIMITS', 'MODE', 'ORIGINS', 'PORT', 'RATIO']);
    expect(problems.find((p) => p.setting === 'PORT')?.message).toBe('must be integer (HTTP port)');
    expect(problems.find((p) => p.setting === 'LIMITS')?.message).toBe('must be JSON (object)');
    expect(problems.find((p) => p.setting === 'API_KEY')?.message).toContain('required');
  });

  it('names the nested field of an object setting that is wrong', () => {
    const problems = problemsOf(() => load({ API_KEY: 'k', LIMITS: '{"rpm": 0}', PORT: '70000' }));

    expect(problems).toEqual(
      expect.arrayContaining([
        { setting: 'LIMITS.rpm', message: 'must be >= 1' },
        { setting: 'PORT', message: 'must be <= 65535 (HTTP port)' },
      ]),
    );
  });

  it('says which service and settings are wrong in the message', () => {
    let error: unknown;
    try {
      loadConfig(settings, { service: 'gateway', env: { PORT: '0' } });
    } catch (err) {
      error = err;
    }

    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.name).toBe('ConfigError');
    expect(configError.code).toBe('invalid_config');
    expect(configError.service).toBe('gateway');
    expect(configError.message).toMatch(/^invalid configuration for gateway:\n/);
    expect(configError.message).toContain('  - PORT: must be >= 1 (HTTP port)');
    expect(configError.message).toContain('  - API_KEY: ');
  });
});

describe('loadConfig with a config file', () => {
  it('takes values from the file, and the environment overrides them', () => {
    const file = configFile('both.json', JSON.stringify({ API_KEY: 'from-file', PORT: 7000, NAME: 'file-name', LIMITS: { rpm: 5 } }));

    const config = load({ PORT: '7001', LIMITS: '{"rpm": 6}' }, file);

    expect(config).toMatchObject({ API_KEY: 'from-file', NAME: 'file-name', PORT: 7001, LIMITS: { rpm: 6 } });
  });

  it('finds the file through HERMES_CONFIG_FILE', () => {
    const file = configFile('via-env.json', JSON.stringify({ API_KEY: 'from-file', ENABLED: true }));

    const config = load({ HERMES_CONFIG_FILE: file });

    expect(config).toMatchObject({ API_KEY: 'from-file', ENABLED: true });
  });

  it('validates file values like environment values', () => {
    const file = configFile('bad.json', JSON.stringify({ API_KEY: '', PORT: 'x' }));

    const problems = problemsOf(() => load({}, file));

    expect(problems.map((p) => p.setting).sort()).toEqual(['API_KEY', 'PORT']);
  });

  it('a missing or malformed file is reported as HERMES_CONFIG_FILE', () => {
    const missing = problemsOf(() => load({ API_KEY: 'k' }, join(dir, 'nope.json')));
    const malformed = problemsOf(() => load({ API_KEY: 'k' }, configFile('malformed.json', '{"PORT": ')));

    expect(missing).toEqual([{ setting: 'HERMES_CONFIG_FILE', message: expect.stringContaining('nope.json') }]);
    expect(malformed).toEqual([{ setting: 'HERMES_CONFIG_FILE', message: expect.stringContaining('malformed.json') }]);
  });
});

describe('commonSettings', () => {
  const common = Type.Object(commonSettings);

  it('gives every service working defaults', () => {
    expect(loadConfig(common, { service: 'svc', env: {} })).toEqual({
      NATS_URL: 'nats://127.0.0.1:4222',
      HERMES_SUBJECT_PREFIX: 'hermes',
      HERMES_BIND_HOST: '127.0.0.1',
      HERMES_JS_REPLICAS: 1,
      HERMES_OUTAGE_BUDGET_MS: 300_000,
      HERMES_MAX_DELIVERIES: 5,
      HERMES_LIVENESS_ACK_WAITS: 3,
      HEALTH_PORT: 0,
      LOG_LEVEL: 'info',
      LOG_USER_ID: 'plain',
      SHUTDOWN_TIMEOUT_MS: 10_000,
    });
  });

  it('rejects a subject prefix that is not one NATS token, an unknown log level and a bad port', () => {
    const problems = problemsOf(() =>
      loadConfig(common, { service: 'svc', env: { HERMES_SUBJECT_PREFIX: 'a.b', LOG_LEVEL: 'verbose', HEALTH_PORT: 'abc', SHUTDOWN_TIMEOUT_MS: '50' } }),
    );

    expect([...new Set(problems.map((p) => p.setting))].sort()).toEqual(['HEALTH_PORT', 'HERMES_SUBJECT_PREFIX', 'LOG_LEVEL', 'SHUTDOWN_TIMEOUT_MS']);
  });

  it('takes an absolute HERMES_EVENT_SOURCE and refuses a relative one (CloudEvents consumers need an absolute source)', () => {
    expect(loadConfig(common, { service: 'svc', env: { HERMES_EVENT_SOURCE: 'https://hermes.example.test/prod' } }).HERMES_EVENT_SOURCE).toBe(
      'https://hermes.example.test/prod',
    );
    expect(loadConfig(common, { service: 'svc', env: {} }).HERMES_EVENT_SOURCE).toBeUndefined();
    for (const bad of ['hermes/prod', '/prod', 'with space:x']) {
      expect(problemsOf(() => loadConfig(common, { service: 'svc', env: { HERMES_EVENT_SOURCE: bad } })).map((p) => p.setting)).toEqual([
        'HERMES_EVENT_SOURCE',
      ]);
    }
  });
});
