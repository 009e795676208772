import { createLogger } from '@hermes/telemetry';

/** API keys of the gateway tests: a user, a user without roles, an admin, and a user and an admin of team-b (one named alice too). */
export const ALICE = 'alice-key-0123456789abcdef';
export const BOB = 'bob-key-0123456789abcdef0000';
export const ADMIN = 'admin-key-0123456789abcdef00';
export const ALICE_OF_B = 'alice-b-key-0123456789abcdef';
export const ADMIN_OF_B = 'admin-b-key-0123456789abcdef';
export const apiKeys = [
  { key: ALICE, user_id: 'alice', roles: ['user'] },
  { key: BOB, user_id: 'bob', roles: [] },
  { key: ADMIN, user_id: 'ops', roles: ['admin'] },
  { key: ALICE_OF_B, user_id: 'alice', team: 'team-b', roles: ['user'] },
  { key: ADMIN_OF_B, user_id: 'ops-b', team: 'team-b', roles: ['admin'] },
];
export const logger = createLogger({ service: 'gateway-test', level: 'silent' });
