import Link from 'next/link';

/** A missing row and another tenant's row look the same: not found. */
export default function NotFound() {
  return (
    <main className="content">
      <h1>Not found</h1>
      <p>Nothing of your tenant has this address. It may have been mistyped, or it belongs to another tenant.</p>
      <p>
        <Link href="/programs">Go to the programs</Link>
      </p>
    </main>
  );
}
