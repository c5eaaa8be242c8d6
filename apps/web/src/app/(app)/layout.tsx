import type { ReactNode } from 'react';
import { Nav } from '../../components/nav';
import { hasRole } from '../../lib/roles';
import { requireSession } from '../../lib/session';
import { Providers } from '../../lib/trpc';
import { signOut } from './actions';

export const dynamic = 'force-dynamic';

export default async function AppLayout({ children }: { children: ReactNode }) {
  const s = await requireSession();
  const admin = hasRole(s.role, 'admin');
  return (
    <>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        <a href="/programs" className="brand">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>{' '}
          Probeyard
        </a>
        <Nav admin={admin} />
        <div className="who">
          <span className="tenant" title="Tenant">
            {s.tenant.name}
          </span>
          <span className={`role role-${s.role}`} title="Your role in this tenant">
            {s.role}
          </span>
          <span className="muted small" data-testid="user-email">
            {s.user.email}
          </span>
          <form action={signOut}>
            <button type="submit" className="button small">
              Sign out
            </button>
          </form>
        </div>
      </header>
      <main id="main" className="content">
        <Providers>{children}</Providers>
      </main>
    </>
  );
}
