import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import './globals.css';

// Every page is rendered per request: the Content Security Policy's nonce (src/proxy.ts) is new each time.
export const dynamic = 'force-dynamic';

export const metadata: Metadata = {
  title: { default: 'Probeyard', template: '%s · Probeyard' },
  description: 'eBPF tracing programs: compatibility computed per kernel, fleets, live outputs',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
