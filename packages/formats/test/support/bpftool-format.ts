// Prints a BtfSpec the way `bpftool btf dump file X` does (plain format), so a test can compare
// the whole decoded type section with bpftool's independent reading of it.
import type { BtfSpec } from '../../src/btf/btf-spec.js';

const q = (name: string) => `'${name === '' ? '(anon)' : name}'`;

export function bpftoolDump(btf: BtfSpec): string {
  const out: string[] = [];
  for (let id = 1; id < btf.typeCount; id++) {
    const t = btf.type(id);
    const head = `[${id}] ${t.kind.toUpperCase()} ${q(t.name)}`;
    switch (t.kind) {
      case 'int': {
        const enc = t.signed ? 'SIGNED' : t.char ? 'CHAR' : t.bool ? 'BOOL' : '(none)';
        out.push(`${head} size=${t.size} bits_offset=${t.bitOffset} nr_bits=${t.bits} encoding=${enc}`);
        break;
      }
      case 'ptr':
      case 'typedef':
      case 'volatile':
      case 'const':
      case 'restrict':
      case 'type_tag':
        out.push(`${head} type_id=${t.type}`);
        break;
      case 'array':
        out.push(`${head} type_id=${t.type} index_type_id=${t.indexType} nr_elems=${t.nelems}`);
        break;
      case 'struct':
      case 'union':
        out.push(`${head} size=${t.size} vlen=${t.members.length}`);
        for (const m of t.members) {
          out.push(`\t${q(m.name)} type_id=${m.type} bits_offset=${m.bitOffset}${m.bitfieldSize > 0 ? ` bitfield_size=${m.bitfieldSize}` : ''}`);
        }
        break;
      case 'enum':
      case 'enum64':
        out.push(`${head} encoding=${t.signed ? 'SIGNED' : 'UNSIGNED'} size=${t.size} vlen=${t.values.length}`);
        for (const v of t.values) out.push(`\t${q(v.name)} val=${v.value}${t.kind === 'enum64' ? (t.signed ? 'LL' : 'ULL') : ''}`);
        break;
      case 'fwd':
        out.push(`${head} fwd_kind=${t.fwdKind}`);
        break;
      case 'func':
        out.push(`${head} type_id=${t.type} linkage=${t.linkage}`);
        break;
      case 'func_proto':
        out.push(`${head} ret_type_id=${t.returnType} vlen=${t.params.length + (t.variadic ? 1 : 0)}`);
        for (const p of t.params) out.push(`\t${q(p.name)} type_id=${p.type}`);
        if (t.variadic) out.push(`\t'(anon)' type_id=0`);
        break;
      case 'var':
        out.push(`${head} type_id=${t.type}, linkage=${t.linkage}`);
        break;
      case 'datasec':
        out.push(`${head} size=${t.size} vlen=${t.vars.length}`);
        for (const v of t.vars) out.push(`\ttype_id=${v.type} offset=${v.byteOffset} size=${v.size} (VAR ${q(btf.nameOf(v.type))})`);
        break;
      case 'float':
        out.push(`${head} size=${t.size}`);
        break;
      case 'decl_tag':
        out.push(`${head} type_id=${t.type} component_idx=${t.componentIdx}`);
        break;
      case 'void':
        break;
    }
  }
  return `${out.join('\n')}\n`;
}
