'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

const items = [
  { href: '/programs', label: 'Programs' },
  { href: '/compat', label: 'Compatibility' },
  { href: '/kernels', label: 'Kernels' },
  { href: '/providers', label: 'Providers' },
  { href: '/deployments', label: 'Deployments' },
  { href: '/agents', label: 'Agents' },
  { href: '/live', label: 'Live' },
  { href: '/tokens', label: 'Tokens' },
  { href: '/members', label: 'Members', admin: true },
  { href: '/audit', label: 'Audit', admin: true },
];

/** The area links; the current one is marked for screen readers too (`aria-current`). */
export function Nav({ admin }: { admin: boolean }) {
  const path = usePathname();
  return (
    <nav aria-label="Main">
      <ul className="nav">
        {items
          .filter((i) => admin || !i.admin)
          .map((i) => {
            const current = path === i.href || path.startsWith(`${i.href}/`);
            return (
              <li key={i.href}>
                <Link href={i.href} aria-current={current ? 'page' : undefined}>
                  {i.label}
                </Link>
              </li>
            );
          })}
      </ul>
    </nav>
  );
}
