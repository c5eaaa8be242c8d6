/** Agents write their last-seen time in batches every 30 s and poll every 10 s: not seen for this long is stale. */
export const staleAfterMs = 90_000;

export function isStale(lastSeenAt: string | null, now: number): boolean {
  return !lastSeenAt || now - Date.parse(lastSeenAt) > staleAfterMs;
}

export function labelsText(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}
