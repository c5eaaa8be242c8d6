// The registry's runtime entry point for apps that start it in-process (`probeyard serve`, and
// `probeyard admin create-tenant` when no registry runs). Other code reaches the registry over HTTP
// and imports only the router type from the package root.
export { readAdminCredential } from './auth/admin-credential.js';
export { RegistryError, type RegistryErrorCode } from './errors.js';
export { jsonLogger, type Logger, silentLogger } from './server/log.js';
export {
  closeOnSignals,
  createTenantOffline,
  defaultPort,
  readRunningRegistry,
  type RunningRegistry,
  type StartOptions,
  startRegistry,
} from './server/registry.js';
