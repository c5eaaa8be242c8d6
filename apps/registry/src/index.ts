// The registry's public surface for other apps: types only (the CLI, the agent and the web app
// build typed tRPC clients from `AppRouter`). The runtime entry is `@probeyard/registry/server`.
export type { AppRouter } from './router.js';
export type { RegistryErrorCode } from './errors.js';
export type { Role } from './auth/roles.js';
