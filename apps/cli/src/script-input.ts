// Scripts as CLI input: a `.bt` file, `-e 'SCRIPT'`, or a script artifact (what publish stores),
// compiled by packages/script for a kernel profile; compile errors are printed as a compiler
// prints them (line, column, caret, hint) and end the command with exit code 2.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isCompatError, type KernelProfile, type ProgramSpec, type ProviderDefinition, parseProvider } from '@probeyard/compat';
import { type CompiledScript, compileScript, compileScriptArtifact, formatDiagnostics, isScriptArtifact, noTarget, providerResolver, targetOfProfile } from '@probeyard/script';
import { CliError, ExitCode } from './io.js';

/** Whether PROGRAM names a script by its extension. */
export const isScriptPath = (path: string) => /\.bt$/i.test(path);

/** Whether PROGRAM's bytes are a script: a `.bt` path, or a script artifact. */
export const isScriptInput = (path: string, bytes: Uint8Array) => isScriptPath(path) || isScriptArtifact(bytes);

/**
 * Compiles a script (its source, or an artifact) for a kernel profile (its events and formats;
 * none: scripts that read no `args` and use no wildcards still compile).
 */
export async function compileForCli(name: string, bytes: Uint8Array, profile: KernelProfile | undefined, providers?: readonly ProviderDefinition[]): Promise<CompiledScript> {
  const resolver = providers === undefined ? {} : { providers: providerResolver(providers) };
  const r = isScriptArtifact(bytes)
    ? await compileScriptArtifact(bytes, { name, ...resolver })
    : await compileScript(new TextDecoder().decode(bytes), { name, target: profile === undefined ? noTarget : targetOfProfile(profile), ...resolver });
  if (!r.ok) {
    const n = r.diagnostics.length;
    throw new CliError(`${formatDiagnostics(r.source, r.diagnostics)}${n} error${n === 1 ? '' : 's'}`, ExitCode.usage);
  }
  return r;
}

/** The spec of a script (see {@link compileForCli}). */
export async function scriptSpec(name: string, bytes: Uint8Array, profile: KernelProfile | undefined, providers?: readonly ProviderDefinition[]): Promise<ProgramSpec> {
  return (await compileForCli(name, bytes, profile, providers)).spec;
}

/**
 * Provider definitions from files (`--provider FILE|DIR`, packages/compat's JSON format; a DIR
 * gives each of its `*.json` files, in name order, as `library/providers`). Unreadable or
 * malformed, or two definitions of one provider: exit 2.
 */
export function readProviderFiles(paths: readonly string[] | undefined): ProviderDefinition[] | undefined {
  if (paths === undefined || paths.length === 0) return undefined;
  const files = paths.flatMap((path) => {
    let dir = false;
    try {
      dir = statSync(path).isDirectory();
    } catch (e) {
      throw new CliError(`--provider ${path}: ${(e as Error).message}`, ExitCode.usage);
    }
    if (!dir) return [path];
    const json = readdirSync(path).filter((f) => f.endsWith('.json')).sort();
    if (json.length === 0) throw new CliError(`--provider ${path}: the folder has no .json provider`, ExitCode.usage);
    return json.map((f) => join(path, f));
  });
  const out: ProviderDefinition[] = [];
  for (const path of files) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new CliError(`${path}: ${(e as Error).message}`, ExitCode.usage);
    }
    let def: ProviderDefinition;
    try {
      def = parseProvider(text);
    } catch (e) {
      if (isCompatError(e)) throw new CliError(`${path}: ${e.message}`, ExitCode.usage);
      throw e;
    }
    const twin = out.find((d) => d.name === def.name);
    if (twin !== undefined) throw new CliError(`${path}: provider ${def.name} is given twice (${twin.version} and ${def.version}): give the one version the program pins`, ExitCode.usage);
    out.push(def);
  }
  return out;
}
