import { readFileSync } from 'node:fs';
import { ConfigError } from '@hermes/config';
import { validate } from '@hermes/contracts';
import { ApiKeyList, type ApiKeyEntry, type GatewaySettings } from './settings.js';

type KeySettings = Pick<GatewaySettings, 'HERMES_API_KEYS' | 'HERMES_API_KEYS_FILE'>;

/**
 * The configured API keys: those in HERMES_API_KEYS plus those in HERMES_API_KEYS_FILE (a mounted
 * secret, so keys stay out of the environment). Throws ConfigError when there are none, the file
 * is unreadable or invalid, or one key is listed twice (it could only map to one user).
 */
export function loadApiKeys(settings: KeySettings): ApiKeyEntry[] {
  const entries: ApiKeyEntry[] = [...(settings.HERMES_API_KEYS ?? [])];
  const file = settings.HERMES_API_KEYS_FILE;
  if (file) entries.push(...readKeyFile(file));
  if (entries.length === 0) {
    throw new ConfigError('gateway', [{ setting: 'HERMES_API_KEYS', message: 'no API keys configured (set HERMES_API_KEYS or HERMES_API_KEYS_FILE)' }]);
  }
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    if (seen.has(entry.key)) {
      throw new ConfigError('gateway', [{ setting: 'HERMES_API_KEYS', message: `key #${index + 1} (user ${entry.user_id}) is listed twice` }]);
    }
    seen.add(entry.key);
  }
  return entries;
}

function readKeyFile(file: string): ApiKeyEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError('gateway', [{ setting: 'HERMES_API_KEYS_FILE', message: `cannot read ${file} as JSON: ${(err as Error).message}` }], { cause: err });
  }
  const checked = validate(ApiKeyList, parsed);
  if (!checked.ok) {
    const problems = checked.issues.map((i) => ({ setting: `HERMES_API_KEYS_FILE${i.path.replace(/\//g, '.')}`, message: i.message }));
    throw new ConfigError('gateway', problems);
  }
  return checked.value;
}
