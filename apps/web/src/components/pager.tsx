import Link from 'next/link';

/** Server-side pages: a link to the next page (by cursor) and back to the first. */
export function Pager({ firstHref, nextHref, isFirst, count, noun }: { firstHref: string; nextHref: string | null; isFirst: boolean; count: number; noun: string }) {
  if (isFirst && !nextHref) return null;
  return (
    <nav className="pager" aria-label={`Pages of ${noun}`}>
      {!isFirst ? <Link href={firstHref}>← First page</Link> : null}
      <span className="muted small">
        {count} {noun} on this page
      </span>
      {nextHref ? (
        <Link href={nextHref} rel="next">
          Next page →
        </Link>
      ) : null}
    </nav>
  );
}
