// How CLI commands reach a registry: URL and token resolution (flags, environment, config file),
// the typed tRPC client, error mapping to exit codes, option parsing and terminal tables.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ParseArgsConfig, parseArgs } from 'node:util';
// Only the router's type crosses from the registry app (docs/ARCHITECTURE.md).
import type { AppRouter } from '@probeyard/registry';
import { createTRPCClient, httpLink, type TRPCClient, TRPCClientError } from '@trpc/client';
import { CliError, ExitCode } from './io.js';

/** The registry a fresh `probeyard serve` listens on. */
export const defaultRegistryUrl = 'http://127.0.0.1:4700';

/** `~/.config/probeyard/config.json` (or `$XDG_CONFIG_HOME/…`, or `$PROBEYARD_CONFIG`). */
export function configPath(): string {
  if (process.env.PROBEYARD_CONFIG) return process.env.PROBEYARD_CONFIG;
  const base = process.env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'probeyard', 'config.json');
}

export interface CliConfig {
  registry?: string;
  token?: string;
}

export function readConfig(): CliConfig {
  const path = configPath();
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as CliConfig;
  } catch (err) {
    throw new CliError(`config ${path}: not valid JSON: ${(err as Error).message}`);
  }
}

/** Writes the config file readable only by its owner (it holds a token). */
export function writeConfig(config: CliConfig): string {
  const path = configPath();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** The repository's default data folder (`.data/` at the root), found from this module's place. */
export function defaultDataDir(): string {
  if (process.env.PROBEYARD_DATA) return process.env.PROBEYARD_DATA;
  // src/registry.ts and dist/registry.js are both three levels below the repository root.
  return fileURLToPath(new URL('../../../.data', import.meta.url));
}

/** Registry URL and token: flags, then PROBEYARD_REGISTRY / PROBEYARD_TOKEN, then the config file. */
export function resolveTarget(flags: { registry?: string | undefined; token?: string | undefined }): { url: string; token?: string } {
  const config = readConfig();
  const url = flags.registry ?? process.env.PROBEYARD_REGISTRY ?? config.registry ?? defaultRegistryUrl;
  const token = flags.token ?? process.env.PROBEYARD_TOKEN ?? config.token;
  return { url: url.replace(/\/+$/, ''), ...(token ? { token } : {}) };
}

export type RegistryClient = TRPCClient<AppRouter>;

/** A typed client of the registry API (types from `@probeyard/registry`, no runtime code of it). */
export function registryClient(url: string, token?: string, opts: { fetch?: typeof fetch } = {}): RegistryClient {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${url}/trpc`, headers: () => (token ? { authorization: `Bearer ${token}` } : {}), ...(opts.fetch ? { fetch: opts.fetch } : {}) })],
  });
}

/** Runs a registry call, turning its errors into CLI errors with the right exit code. */
export async function callRegistry<T>(url: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof TRPCClientError) {
      const code = (err.data as { code?: string } | undefined)?.code;
      if (code === undefined) {
        throw new CliError(`registry ${url}: ${(err.cause as Error | undefined)?.message ?? err.message}`, ExitCode.refused);
      }
      const usage = code === 'BAD_REQUEST' || code === 'PARSE_ERROR' || code === 'PAYLOAD_TOO_LARGE';
      throw new CliError(err.message, usage ? ExitCode.usage : ExitCode.refused, { cause: err });
    }
    throw err;
  }
}

/** Parses options with node:util, turning its errors into usage errors. */
type Parsed<T extends NonNullable<ParseArgsConfig['options']>> = ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>>;

export function parseOptions<const T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError((err as Error).message.split('\n')[0] ?? 'bad options');
  }
}

/** `--registry URL --token T`, accepted by every command that talks to a registry. */
export const targetOptions = {
  registry: { type: 'string' },
  token: { type: 'string' },
} as const;

/** Rows as left-aligned columns separated by two spaces (the first row is the header). */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n');
}
