import type { NextConfig } from 'next';

// Production server of the web app. Security headers that do not depend on the request live
// here; the Content Security Policy (with a per-request nonce) is set by src/proxy.ts.
const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // `pnpm typecheck` checks the app with the repository's strict settings; the build does not
  // repeat it (it would cost a minute of the 2-core CI machine).
  typescript: { ignoreBuildErrors: true },
  productionBrowserSourceMaps: false,
  // Pages name their icon (app/icon.svg), but a browser that leaves a page before its <head> is
  // read asks for /favicon.ico; answer it with the same icon instead of a 404.
  async redirects() {
    return [{ source: '/favicon.ico', destination: '/icon.svg', permanent: true }];
  },
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'Referrer-Policy', value: 'same-origin' },
          { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
          { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()' },
        ],
      },
    ];
  },
};

export default config;
