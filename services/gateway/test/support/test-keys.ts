import { createLogger } from '@hermes/telemetry';

/** API keys of the gateway tests: a user, a user without roles, and an admin. */
export const ALICE = 'alice-key-0123456789abcdef';
export const BOB = 'bob-key-0123456789abcdef0000';
export const ADMIN = 'admin-key-0123456789abcdef00';
export const apiKeys = [
  { key: ALICE, user_id: 'alice', roles: ['user'] },
  { key: BOB, user_id: 'bob', roles: [] },
  { key: ADMIN, user_id: 'ops', roles: ['admin'] },
];
export const logger = createLogger({ service: 'gateway-test', level: 'silent' });
