// libbpf-tools' command-line options: the user-space half writes `const volatile` variables of
// `.rodata` (`skel->rodata->filter_pid = env.pid`) before load, then libbpf freezes the map and the
// kernel's verifier reads them as constants. Here a deployment (or `probeyard run --set`) gives the
// values by variable name; the spec's `.rodata` bytes change, and the verdict, the verifier and the
// VM all see the same values.
import { CompatError } from './errors.js';
import type { ProgramSpec } from './program-spec.js';

/** A value for one `.rodata` variable: an integer (or a boolean) of the variable's size. */
export type RodataValue = bigint | number | boolean;

/** Parses `NAME=VALUE` (decimal, `0x` hex, negative, `true`/`false`) as {@link setRodata} takes it. */
export function parseRodataAssignment(text: string): [string, RodataValue] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new CompatError('malformed', `rodata: ${JSON.stringify(text)} is not NAME=VALUE`);
  const name = text.slice(0, eq);
  const raw = text.slice(eq + 1).trim();
  if (raw === 'true' || raw === 'false') return [name, raw === 'true'];
  if (!/^-?(0x[0-9a-fA-F]+|\d+)$/.test(raw)) throw new CompatError('malformed', `rodata: ${name}: ${JSON.stringify(raw)} is not an integer or true/false`);
  const negative = raw.startsWith('-');
  const v = BigInt(negative ? raw.slice(1) : raw);
  return [name, negative ? -v : v];
}

/**
 * A copy of `spec` whose read-only globals (`.rodata`: `const volatile` variables) hold `values`
 * by variable name, little-endian at each variable's size. A name that is not a read-only
 * variable, or a value that does not fit, is `malformed` (naming the variables there are).
 */
export function setRodata(spec: ProgramSpec, values: Readonly<Record<string, RodataValue>>): ProgramSpec {
  const names = Object.keys(values);
  if (names.length === 0) return spec;
  const globals = spec.globals.map((g) => ({ ...g, ...(g.bytes === undefined ? {} : { bytes: new Uint8Array(g.bytes) }) }));
  const rodata = globals.filter((g) => g.kind === 'rodata' && g.bytes !== undefined && spec.maps.some((m) => m.globalSection === g.section && m.readonly));
  for (const name of names) {
    const g = rodata.find((x) => x.vars.some((v) => v.name === name));
    const v = g?.vars.find((x) => x.name === name);
    if (g === undefined || v === undefined) {
      const known = rodata.flatMap((x) => x.vars.map((y) => y.name));
      throw new CompatError('malformed', `rodata: no read-only variable ${name} (the object's: ${known.join(', ') || 'none'})`);
    }
    const raw = values[name]!;
    const value = typeof raw === 'boolean' ? (raw ? 1n : 0n) : BigInt(raw);
    const bits = BigInt(v.size * 8);
    if (v.size > 8 || value >= 1n << bits || value < -(1n << (bits - 1n))) {
      throw new CompatError('malformed', `rodata: ${name} has ${v.size} bytes, ${value} does not fit`);
    }
    let u = BigInt.asUintN(Number(bits), value);
    for (let b = 0; b < v.size; b++) {
      g.bytes![v.byteOffset + b] = Number(u & 0xffn);
      u >>= 8n;
    }
  }
  return { ...spec, globals };
}
