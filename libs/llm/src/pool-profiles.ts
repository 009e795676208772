import type { KV } from '@nats-io/kv';
import type { StoredPoolProfile } from '@hermes/contracts';
import type { LlmClient } from './llm-client.js';

const CHAT_ROLES = ['worker', 'planner', 'summarizer'] as const;

/** The key of a role's profile record in the semaphore bucket (beside the pools' `pool.<name>`). */
export const poolProfileKey = (pool: string, role: string) => `profile.${pool}.${role}`;

/** What the client knows of each chat role's server: its profile, what it supports, and its model's window with where it came from. */
export function poolProfiles(llm: LlmClient, reportedBy: string, now = new Date()): StoredPoolProfile[] {
  return CHAT_ROLES.map((role) => {
    const profile = llm.profileFor(role);
    const window = llm.contextWindowOf(role);
    return {
      v: 1,
      pool: llm.poolFor(role),
      role,
      model: llm.modelFor(role),
      provider: llm.providerProfileName(role),
      provider_name: profile.providerName,
      supports: {
        params: [...profile.params],
        response_format: [...profile.responseFormats],
        stream_usage: profile.streamUsage,
        tool_choice: profile.toolChoice,
        reasoning: [...profile.reasoning],
      },
      context: !window
        ? { tokens: null, source: 'unknown' }
        : window.source === 'configured'
          ? { tokens: window.tokens, source: 'configured' }
          : { tokens: window.tokens, source: 'detected', detected_from: window.detectedFrom, detected_at: window.detectedAt },
      reported_by: reportedBy,
      reported_at: now.toISOString(),
    };
  });
}

/**
 * Writes each chat role's profile record for `hermes llm status`. Best effort: a service whose
 * write fails still starts (the status then lacks the record, or shows an older one).
 */
export async function reportPoolProfiles(llm: LlmClient, kv: KV, reportedBy: string): Promise<void> {
  await Promise.all(poolProfiles(llm, reportedBy).map((p) => kv.put(poolProfileKey(p.pool, p.role), JSON.stringify(p)).catch(() => undefined)));
}
