/** A verdict in words and colour (never colour alone). */
export const verdictText: Record<string, string> = {
  compatible: 'compatible',
  relocated: 'relocated',
  incompatible: 'incompatible',
  unknown: 'unknown',
  pending: 'computing…',
};

export function Verdict({ verdict }: { verdict: string }) {
  return <span className={`verdict v-${verdict}`}>{verdictText[verdict] ?? verdict}</span>;
}
