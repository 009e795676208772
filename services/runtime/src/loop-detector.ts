/** The identity of a tool call for loop detection: the tool and its arguments, key order ignored. */
export function callSignature(name: string, rawArguments: string): string {
  let args: unknown = rawArguments;
  try {
    args = canonical(JSON.parse(rawArguments));
  } catch {
    // Malformed arguments are compared as text.
  }
  return `${name} ${JSON.stringify(args)}`;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

/**
 * A call is a repeat when the same signature was already made in this job. The turn that would
 * make a signature's `maxRepeats`-th repeat is not run: the loop stops (default 2: the third
 * identical call).
 */
export function findLoop(previous: readonly string[], next: readonly string[], maxRepeats: number): string | undefined {
  const counts = new Map<string, number>();
  for (const s of [...previous, ...next]) counts.set(s, (counts.get(s) ?? 0) + 1);
  return next.find((s) => (counts.get(s) ?? 0) - 1 >= maxRepeats);
}
