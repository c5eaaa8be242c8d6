// The compiler never emits what the verifier refuses for a script that compiled: random
// well-typed scripts (every statement kind, nested expressions deep enough to spill registers,
// strings of every source, every aggregation) compile, verify, and run on random records without
// a fault. Fixed seed: the property is heavy and must be deterministic under load.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileScript } from '../src/compile.js';
import { formatDiagnostics } from '../src/source-text.js';
import { fixtureFormats, makeRecord, ScriptRun, target618 } from './support/harness.js';

const formats = fixtureFormats('linux-6.18');

/** Integer and string fields per event, for well-typed `args.FIELD`. */
const events: Record<string, { ints: string[]; strings: string[] }> = {
  'raw_syscalls/sys_enter': { ints: ['id', 'args[0]', 'args[5]'], strings: [] },
  'sched/sched_switch': { ints: ['prev_pid', 'prev_prio', 'prev_state', 'next_pid', 'next_prio'], strings: ['prev_comm', 'next_comm'] },
  'sched/sched_wakeup': { ints: ['pid', 'prio', 'target_cpu'], strings: ['comm'] },
  'sched/sched_process_exec': { ints: ['pid', 'old_pid'], strings: ['filename'] },
  'block/block_rq_issue': { ints: ['dev', 'sector', 'nr_sector', 'bytes', 'ioprio'], strings: ['rwbs', 'comm'] },
};

type Ctx = { event: string | undefined; vars: { ints: string[]; strings: string[] } };

const intLeaf = (ctx: Ctx): fc.Arbitrary<string> => {
  const leaves: fc.Arbitrary<string>[] = [
    fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }).map(String),
    fc.constantFrom('pid', 'tid', 'cpu', 'nsecs', 'elapsed', 'curtask', 'rand', 'cgroup', 'jiffies', 'uid', 'gid'),
    fc.constantFrom(...['0', '1', '0xffffffff', '4294967296', '-1']),
    fc.constantFrom('@i[1]', '@i[pid]'),
  ];
  if (ctx.event !== undefined) leaves.push(fc.constantFrom(...events[ctx.event]!.ints.map((f) => `args.${f}`)));
  if (ctx.vars.ints.length > 0) leaves.push(fc.constantFrom(...ctx.vars.ints.map((v) => `$${v}`)));
  return fc.oneof(...leaves);
};

const strLeaf = (ctx: Ctx): fc.Arbitrary<string> => {
  const leaves: fc.Arbitrary<string>[] = [fc.constantFrom('comm', 'probe', '"bash"', '""', '"a string of more than sixteen bytes"'), fc.constant('@s[cpu]')];
  if (ctx.event !== undefined && events[ctx.event]!.strings.length > 0) leaves.push(fc.constantFrom(...events[ctx.event]!.strings.flatMap((f) => [`args.${f}`, `str(args.${f})`, `str(args.${f}, 3)`])));
  if (ctx.vars.strings.length > 0) leaves.push(fc.constantFrom(...ctx.vars.strings.map((v) => `$${v}`)));
  return fc.oneof(...leaves);
};

function intExpr(ctx: Ctx, depth: number): fc.Arbitrary<string> {
  if (depth <= 0) return intLeaf(ctx);
  const sub = intExpr(ctx, depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: intLeaf(ctx) },
    // a constant divisor of 0 is a compile error (as in bpftrace): divide by (b | 1)
    fc.tuple(sub, fc.constantFrom('+', '-', '*', '/', '%', '&', '|', '^', '<<', '>>', '==', '!=', '<', '<=', '>', '>=', '&&', '||'), sub).map(([a, op, b]) => (op === '/' || op === '%' ? `(${a} ${op} (${b} | 1))` : `(${a} ${op} ${b})`)),
    fc.tuple(fc.constantFrom('-', '~', '!'), sub).map(([op, a]) => `${op}(${a})`),
    fc.tuple(fc.constantFrom('uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'uint64', 'int64'), sub).map(([t, a]) => `(${t})(${a})`),
    fc.tuple(sub, sub, sub).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
    fc.tuple(strLeaf(ctx), strLeaf(ctx), fc.constantFrom('==', '!=')).map(([a, b, op]) => `(${a} ${op} ${b})`),
    fc.tuple(strLeaf(ctx), strLeaf(ctx), fc.integer({ min: 0, max: 20 })).map(([a, b, n]) => `strncmp(${a}, ${b}, ${n})`),
  );
}

function strExpr(ctx: Ctx, depth: number): fc.Arbitrary<string> {
  if (depth <= 0) return strLeaf(ctx);
  return fc.oneof({ weight: 3, arbitrary: strLeaf(ctx) }, fc.tuple(intExpr(ctx, 1), strLeaf(ctx), strLeaf(ctx)).map(([c, a, b]) => `(${c} ? ${a} : ${b})`));
}

/** Maps of fixed kinds, so every generated use is well typed. */
const aggregation = (ctx: Ctx, depth: number) =>
  fc.oneof(
    fc.tuple(intExpr(ctx, 1), strExpr(ctx, 0)).map(([k, s]) => `@c[${k}, ${s}] = count()`),
    intExpr(ctx, depth).map((x) => `@sum[cpu] = sum(${x})`),
    intExpr(ctx, depth).map((x) => `@mn = min(${x})`),
    intExpr(ctx, depth).map((x) => `@mx[comm] = max(${x})`),
    intExpr(ctx, depth).map((x) => `@av = avg(${x})`),
    intExpr(ctx, depth).map((x) => `@st[pid] = stats(${x})`),
    fc.tuple(intExpr(ctx, depth), strExpr(ctx, 0)).map(([x, k]) => `@h[${k}] = hist(${x})`),
    intExpr(ctx, depth).map((x) => `@l = lhist(${x}, 0, 100, 10)`),
    fc.tuple(intExpr(ctx, 0), intExpr(ctx, depth)).map(([k, x]) => `@i[${k}] = ${x}`),
    fc.tuple(intExpr(ctx, 0), intExpr(ctx, depth), fc.constantFrom('+=', '-=', '*=', '|=', '<<=')).map(([k, x, op]) => `@i[${k}] ${op} ${x}`),
    intExpr(ctx, 0).map((k) => `@i[${k}]++`),
    fc.tuple(intExpr(ctx, 0), strExpr(ctx, 1)).map(([k, x]) => `@s[${k}] = ${x}`),
    intExpr(ctx, 0).map((k) => `delete(@i[${k}])`),
  );

const printfStmt = (ctx: Ctx, depth: number) =>
  fc.array(fc.oneof(intExpr(ctx, depth).map((x) => ['%ld', x] as const), strExpr(ctx, 0).map((x) => ['%s', x] as const)), { maxLength: 4 }).map((args) => `printf("${args.map((a) => a[0]).join(' ')}\\n"${args.map((a) => `, ${a[1]}`).join('')})`);

function statements(ctx: Ctx, depth: number): fc.Arbitrary<string[]> {
  const stmt: fc.Arbitrary<string> = fc.oneof(
    { weight: 4, arbitrary: aggregation(ctx, depth) },
    { weight: 2, arbitrary: printfStmt(ctx, depth) },
    fc.constantFrom('print(@i)', 'clear(@s)', 'zero(@i)', 'print(@c, 2, 1)', 'print(pid)'),
    depth > 0 ? fc.tuple(intExpr(ctx, depth), aggregation(ctx, depth - 1), aggregation(ctx, depth - 1)).map(([c, a, b]) => `if (${c}) { ${a}; } else { ${b}; }`) : aggregation(ctx, 0),
    // a bounded loop (its counter $n is no operand of the generated expressions), with continue and break on generated conditions
    depth > 0
      ? fc.tuple(fc.integer({ min: 1, max: 4 }), intExpr(ctx, 1), intExpr(ctx, 1), aggregation(ctx, depth - 1), printfStmt(ctx, 0)).map(
          ([k, c, b, a, p]) => `$n = 0; while ($n < ${k}) { $n++; if (${c}) { continue; } ${a}; if (${b}) { break; } ${p}; }`,
        )
      : aggregation(ctx, 0),
    depth > 0 ? fc.tuple(fc.integer({ min: 1, max: 3 }), aggregation(ctx, depth - 1)).map(([k, a]) => `unroll(${k}) { ${a}; }`) : aggregation(ctx, 0),
  );
  return fc.array(stmt, { minLength: 1, maxLength: 5 });
}

/** A probe: scratch variables first (so later statements may use them), then statements. */
const probe = fc.constantFrom<string | undefined>(undefined, ...Object.keys(events)).chain((event) => {
  const ctx: Ctx = { event, vars: { ints: ['a', 'b'], strings: ['t'] } };
  const attach = event === undefined ? fc.constantFrom('BEGIN', 'END', 'interval:us:3') : fc.constant(`tracepoint:${event.replace('/', ':')}`);
  const bare: Ctx = { event, vars: { ints: [], strings: [] } };
  return fc.tuple(attach, fc.option(intExpr(bare, 2), { nil: undefined }), intExpr(bare, 3), intExpr(bare, 1), strExpr(bare, 1), statements(ctx, 3)).map(
    ([a, pred, va, vb, vt, body]) => `${a}${pred === undefined ? '' : ` /${pred}/`} {\n  $a = ${va}; $b = ${vb}; $t = ${vt};\n  ${body.join(';\n  ')};\n}`,
  );
});

/** Every map the statements may read is assigned somewhere: a probe that assigns each kind. */
const prelude = 'BEGIN { @i[0] = 0; @s[0] = ""; @c[0, ""] = count(); }';

const recordsFor = (seed: number) =>
  Object.keys(events).flatMap((event, e) => {
    const f = formats.find((x) => `${x.system}/${x.name}` === event)!;
    return [0, 1, 2].map((i) => ({
      event,
      data: makeRecord(f, { id: seed + i, prev_pid: seed - i, next_pid: i, prev_state: -i, sector: 2n ** 33n + BigInt(seed), prev_comm: 'swapper/0', next_comm: 'bash', comm: 'kworker/1:2', filename: '/usr/bin/true', rwbs: 'WS' }, 1 + i),
      timestamp: 1000 * (e * 3 + i + 1),
      cpu: i % 2,
    }));
  });

describe('generated scripts always verify', () => {
  it('any well-typed script compiles to programs the verifier accepts, and runs without a fault', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(probe, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 1000 }), async (probes, seed) => {
        const text = [prelude, ...probes].join('\n');
        const r = await compileScript(text, { target: target618(), name: 'generated.bt' });
        if (!r.ok) throw new Error(`${text}\n${formatDiagnostics(r.source, r.diagnostics)}`);
        // compileScript verified every program (an `internal` diagnostic otherwise); run them too
        const run = new ScriptRun(r.spec, { formats }).run(recordsFor(seed));
        expect(run.session.exited).toBe(true);
      }),
      { numRuns: 120, seed: 1717, endOnFailure: true },
    );
  }, 600_000);
});
