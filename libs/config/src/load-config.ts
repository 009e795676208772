import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { ConfigError } from './config-error.js';

const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: true, useDefaults: true });

export interface LoadConfigOptions {
  service: string;
  env?: NodeJS.ProcessEnv;
  /** JSON config file; defaults to `HERMES_CONFIG_FILE`. Environment variables override it. */
  file?: string;
}

/**
 * Reads the settings a schema declares (property names are the environment variable names) from
 * an optional JSON file and then the environment, coerces and validates them, applies defaults,
 * and throws a ConfigError naming every bad setting.
 */
export function loadConfig<S extends TObject>(schema: S, opts: LoadConfigOptions): Static<S> {
  const env = opts.env ?? process.env;
  const file = opts.file ?? env.HERMES_CONFIG_FILE;
  const raw: Record<string, unknown> = {};
  if (file) {
    try {
      Object.assign(raw, JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
    } catch (err) {
      throw new ConfigError(opts.service, [{ setting: 'HERMES_CONFIG_FILE', message: `cannot read ${file}: ${(err as Error).message}` }], { cause: err });
    }
  }
  const problems: { setting: string; message: string }[] = [];
  for (const [key, prop] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const value = env[key];
    if (value === undefined || value === '') continue;
    if (prop.type === 'object' || prop.type === 'array') {
      try {
        raw[key] = JSON.parse(value);
      } catch {
        problems.push({ setting: key, message: `must be JSON (${String(prop.type)})` });
      }
    } else {
      raw[key] = value;
    }
  }
  const validateFn = ajv.compile(schema);
  if (!validateFn(raw) || problems.length > 0) {
    for (const e of validateFn.errors ?? []) {
      const params = e.params as Record<string, unknown>;
      const setting = e.keyword === 'required' ? String(params.missingProperty) : e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(config)';
      if (e.keyword === 'additionalProperties') continue;
      problems.push({ setting, message: `${e.message ?? 'is invalid'}${describe(schema, setting)}` });
    }
    throw new ConfigError(opts.service, dedupe(problems));
  }
  return raw as Static<S>;
}

function describe(schema: TObject, setting: string): string {
  const prop = (schema.properties as Record<string, TSchema>)[setting.split('.')[0]!];
  return prop?.description ? ` (${prop.description})` : '';
}

function dedupe<T extends { setting: string; message: string }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((i) => !seen.has(i.setting + i.message) && seen.add(i.setting + i.message));
}
