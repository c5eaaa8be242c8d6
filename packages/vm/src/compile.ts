import { HelperAction } from './helpers.js';
import { InternalOp, type LoadedProgram } from './program.js';
import type { Vm } from './vm.js';
import { mul64, sdivmod64, udivmod64, wide } from './wide.js';

/**
 * The compiled tier: a loaded program translated once into a JavaScript function (registers
 * become local variables, basic blocks become `case`s of one `switch`), which the engine then
 * compiles to machine code. Same semantics, memory checks, instruction counts and faults as the
 * interpreter (the differential tests run both against the reference VM). The generated text
 * holds only numbers the compiler formats itself, never text from the program.
 *
 * Programs with BPF-to-BPF calls, `callx` or tail calls stay on the interpreter, and so does
 * everything where `new Function` is not allowed (a Content-Security-Policy without
 * 'unsafe-eval'): {@link compileProgram} returns undefined then.
 */
export type CompiledProgram = (vm: Vm) => number;

// Invariant of the generated code: every register local holds an int32 (`|0` after `>>>`), as
// the interpreter's Int32Array registers do; comparisons and `%` depend on it.
type Factory = (
  vm: Vm,
  mul64_: typeof mul64,
  udivmod64_: typeof udivmod64,
  sdivmod64_: typeof sdivmod64,
  wide_: Int32Array,
) => CompiledProgram;

const cache = new WeakMap<LoadedProgram, CompiledProgram | null>();

/** Compiles `program` for `vm` (its region table and helpers), or undefined when it cannot. */
export function compileProgram(program: LoadedProgram, vm: Vm): CompiledProgram | undefined {
  const cached = cache.get(program);
  if (cached !== undefined) return cached ?? undefined;
  let compiled: CompiledProgram | null = null;
  const body = generate(program);
  if (body !== undefined) {
    try {
      const factory = new Function('vm', 'mul64', 'udivmod64', 'sdivmod64', 'wide', body) as Factory;
      compiled = factory(vm, mul64, udivmod64, sdivmod64, wide);
    } catch {
      compiled = null;
    }
  }
  cache.set(program, compiled);
  return compiled ?? undefined;
}

const TAIL_CALL_HELPER = 12;

function generate(p: LoadedProgram): string | undefined {
  const n = p.length;
  const { op: OP, dst: DST, src: SRC, off: OFF, imm: IMM, immHi: IMMHI, target: TGT } = p;
  // leaders of basic blocks
  const leader = new Uint8Array(n + 1);
  leader[0] = 1;
  for (let i = 0; i < n; i++) {
    const o = OP[i] as number;
    if (o === InternalOp.callLocal || o === InternalOp.callReg) return undefined;
    if (o === 0x85 && IMM[i] === TAIL_CALL_HELPER) return undefined;
    const t = TGT[i] as number;
    if (t >= 0) {
      leader[t] = 1;
      leader[i + 1] = 1;
    }
    if (o === 0x95 || o === 0x85) leader[i + 1] = 1;
    if (o === InternalOp.loadImm64) i++;
  }
  // instructions in each block (for counting)
  const blockEnd = new Int32Array(n);
  {
    let end = n;
    for (let i = n - 1; i >= 0; i--) {
      if (leader[i + 1]) end = i + 1;
      blockEnd[i] = end;
    }
  }
  const slotsToInsns = (from: number, to: number) => {
    let k = 0;
    for (let i = from; i < to; i++) {
      k++;
      if (OP[i] === InternalOp.loadImm64) i++;
    }
    return k;
  };

  const l = (r: number) => `l${r}`;
  const h = (r: number) => `h${r}`;
  const regs = Array.from({ length: 11 }, (_, r) => r);
  const sync = regs.map((r) => `L[${r}]=${l(r)};H[${r}]=${h(r)};`).join('');
  const out: string[] = [];
  out.push('return function compiled(vm){');
  out.push('const L=vm.regLo,H=vm.regHi,LEN=vm.regionLength,LOW=vm.regionLow,VIEWS=vm.regionViews,BYTES=vm.regionBytes,NR=LEN.length;');
  out.push('const HELPERS=vm.helperTable,budget=vm.budget;');
  out.push(`let ${regs.map((r) => `${l(r)}=L[${r}]|0,${h(r)}=H[${r}]|0`).join(',')};`);
  out.push("let pc=0,n=0,status=0;vm.faultBase=-1;vm.faultSize=0;vm.faultMsg='';");
  out.push('exec:for(;;){switch(pc){');

  const budgetCheck = (at: number) => `if(n>budget){pc=${at};status=2;break exec;}`;
  const isConditional = (o: number) => {
    const cls = o & 0x07;
    const code = o & 0xf0;
    return (cls === 0x05 || cls === 0x06) && code !== 0x00 && code !== 0x80 && code !== 0x90;
  };
  // a block whose last instruction jumps back to its own start becomes a native loop
  let loopStart = -1;
  let loopEnd = -1;
  for (let i = 0; i < n; i++) {
    const o = OP[i] as number;
    if (o === InternalOp.lddwTail) continue;
    if (leader[i]) {
      const count = slotsToInsns(i, blockEnd[i] as number);
      const last = (blockEnd[i] as number) - 1;
      if (isConditional(OP[last] as number) && TGT[last] === i) {
        loopStart = i;
        loopEnd = last;
        out.push(`case ${i}:for(;;){n+=${count};`);
      } else out.push(`case ${i}:n+=${count};`);
    }
    // instructions after this one in its block: subtracted when this one faults
    const after = slotsToInsns(i, blockEnd[i] as number) - 1;
    const d = DST[i] as number;
    const s = SRC[i] as number;
    const k = IMM[i] as number;
    const kh = IMMHI[i] as number;
    const off = OFF[i] as number;
    const D = l(d);
    const DH = h(d);
    const S = l(s);
    const SH = h(s);
    const memFault = (base: number, size: number) =>
      `{n-=${after};pc=${i};vm.faultBase=${base};vm.faultSize=${size};status=1;break exec;}`;
    const addr = (base: number, size: number) =>
      `const id=${h(base)},a=(${l(base)}>>>0)+(${off});if(id<=0||id>=NR||a<LOW[id]||a+${size}>LEN[id])${memFault(base, size)}`;
    if (i === loopEnd && loopStart >= 0) {
      const isImm = (o & 0x08) === 0;
      const cond = condition(o, D, DH, isImm ? `(${k})` : S, isImm ? `(${kh})` : SH) as string;
      out.push(`if(!(${cond}))break;${budgetCheck(loopStart)}}`);
      loopStart = -1;
      loopEnd = -1;
      continue;
    }
    const line = emit();
    out.push(line);

    function emit(): string {
      const isImm = (o & 0x08) === 0;
      const vL = isImm ? `(${k})` : S;
      const vH = isImm ? `(${kh})` : SH;
      switch (o) {
        // ALU32
        case 0x04:
        case 0x0c:
          return `${D}=(${D}+${vL})|0;${DH}=0;`;
        case 0x14:
        case 0x1c:
          return `${D}=(${D}-${vL})|0;${DH}=0;`;
        case 0x24:
        case 0x2c:
          return `${D}=Math.imul(${D},${vL});${DH}=0;`;
        case 0x34:
        case 0x3c:
          return `{const v=${vL};${D}=v===0?0:Math.floor((${D}>>>0)/(v>>>0))|0;${DH}=0;}`;
        case 0x44:
        case 0x4c:
          return `${D}=${D}|${vL};${DH}=0;`;
        case 0x54:
        case 0x5c:
          return `${D}=${D}&${vL};${DH}=0;`;
        case 0x64:
        case 0x6c:
          return `${D}=${D}<<(${vL}&31);${DH}=0;`;
        case 0x74:
        case 0x7c:
          return `${D}=(${D}>>>(${vL}&31))|0;${DH}=0;`;
        case 0x84:
          return `${D}=-${D}|0;${DH}=0;`;
        case 0x94:
        case 0x9c:
          return `{const v=${vL};if(v!==0)${D}=((${D}>>>0)%(v>>>0))|0;${DH}=0;}`;
        case 0xa4:
        case 0xac:
          return `${D}=${D}^${vL};${DH}=0;`;
        case 0xb4:
        case 0xbc:
          return `${D}=${vL};${DH}=0;`;
        case 0xc4:
        case 0xcc:
          return `${D}=${D}>>(${vL}&31);${DH}=0;`;
        case InternalOp.sdiv32Imm:
          return `${D}=${k === 0 ? '0' : `(${D}/(${k}))|0`};${DH}=0;`;
        case InternalOp.sdiv32Reg:
          return `{const v=${S};${D}=v===0?0:(${D}/v)|0;${DH}=0;}`;
        case InternalOp.smod32Imm:
          return k === 0 ? `${DH}=0;` : `${D}=(${D}%(${k}))|0;${DH}=0;`;
        case InternalOp.smod32Reg:
          return `{const v=${S};if(v!==0)${D}=(${D}%v)|0;${DH}=0;}`;
        case InternalOp.movsx8To32:
          return `${D}=(${S}<<24)>>24;${DH}=0;`;
        case InternalOp.movsx16To32:
          return `${D}=(${S}<<16)>>16;${DH}=0;`;
        case InternalOp.le16:
          return `${D}=${D}&0xffff;${DH}=0;`;
        case InternalOp.le32:
          return `${DH}=0;`;
        case InternalOp.le64:
          return '';
        case InternalOp.be16:
        case InternalOp.bswap16:
          return `${D}=((${D}&0xff)<<8)|((${D}>>>8)&0xff);${DH}=0;`;
        case InternalOp.be32:
        case InternalOp.bswap32:
          return `${D}=((${D}&0xff)<<24)|((${D}&0xff00)<<8)|((${D}>>>8)&0xff00)|((${D}>>>24)&0xff);${DH}=0;`;
        case InternalOp.be64:
        case InternalOp.bswap64:
          return `{const x=${D},y=${DH};${D}=((y&0xff)<<24)|((y&0xff00)<<8)|((y>>>8)&0xff00)|((y>>>24)&0xff);${DH}=((x&0xff)<<24)|((x&0xff00)<<8)|((x>>>8)&0xff00)|((x>>>24)&0xff);}`;
        // ALU64
        case 0x07:
        case 0x0f:
          return `{const b=${vL},x=(${D}+b)|0;${DH}=(${DH}+${vH}+((x>>>0)<(b>>>0)?1:0))|0;${D}=x;}`;
        case 0x17:
        case 0x1f:
          return `{const a=${D},b=${vL};${D}=(a-b)|0;${DH}=(${DH}-${vH}-((a>>>0)<(b>>>0)?1:0))|0;}`;
        case 0x27:
        case 0x2f:
          return `${D}=mul64(${D},${DH},${vL},${vH});${DH}=wide[0];`;
        case 0x37:
        case 0x3f:
          return `{const vl=${vL},vh=${vH};if(vl===0&&vh===0){${D}=0;${DH}=0;}else{${D}=udivmod64(${D},${DH},vl,vh);${DH}=wide[0];}}`;
        case 0x97:
        case 0x9f:
          return `{const vl=${vL},vh=${vH};if(vl!==0||vh!==0){udivmod64(${D},${DH},vl,vh);${D}=wide[1];${DH}=wide[2];}}`;
        case InternalOp.sdiv64Imm:
        case InternalOp.sdiv64Reg: {
          const a = o === InternalOp.sdiv64Imm ? `(${k})` : S;
          const b = o === InternalOp.sdiv64Imm ? `(${kh})` : SH;
          return `{const vl=${a},vh=${b};if(vl===0&&vh===0){${D}=0;${DH}=0;}else{${D}=sdivmod64(${D},${DH},vl,vh);${DH}=wide[0];}}`;
        }
        case InternalOp.smod64Imm:
        case InternalOp.smod64Reg: {
          const a = o === InternalOp.smod64Imm ? `(${k})` : S;
          const b = o === InternalOp.smod64Imm ? `(${kh})` : SH;
          return `{const vl=${a},vh=${b};if(vl!==0||vh!==0){sdivmod64(${D},${DH},vl,vh);${D}=wide[1];${DH}=wide[2];}}`;
        }
        case 0x47:
        case 0x4f:
          return `${D}=${D}|${vL};${DH}=${DH}|${vH};`;
        case 0x57:
        case 0x5f:
          return `${D}=${D}&${vL};${DH}=${DH}&${vH};`;
        case 0xa7:
        case 0xaf:
          return `${D}=${D}^${vL};${DH}=${DH}^${vH};`;
        case 0xb7:
        case 0xbf:
          return `${D}=${vL};${DH}=${vH};`;
        case 0x87:
          return `{const x=${D};${D}=-x|0;${DH}=(~${DH}+(x===0?1:0))|0;}`;
        case 0x67:
        case 0x6f:
          return `{const c=${vL}&63;if(c!==0){if(c<32){${DH}=(${DH}<<c)|(${D}>>>(32-c));${D}=${D}<<c;}else{${DH}=${D}<<(c-32);${D}=0;}}}`;
        case 0x77:
        case 0x7f:
          return `{const c=${vL}&63;if(c!==0){if(c<32){${D}=(${D}>>>c)|(${DH}<<(32-c));${DH}=(${DH}>>>c)|0;}else{${D}=(${DH}>>>(c-32))|0;${DH}=0;}}}`;
        case 0xc7:
        case 0xcf:
          return `{const c=${vL}&63;if(c!==0){if(c<32){${D}=(${D}>>>c)|(${DH}<<(32-c));${DH}=${DH}>>c;}else{${D}=${DH}>>(c-32);${DH}=${DH}>>31;}}}`;
        case InternalOp.movsx8To64:
          return `${D}=(${S}<<24)>>24;${DH}=${D}>>31;`;
        case InternalOp.movsx16To64:
          return `${D}=(${S}<<16)>>16;${DH}=${D}>>31;`;
        case InternalOp.movsx32To64:
          return `${D}=${S};${DH}=${D}>>31;`;
        case InternalOp.loadImm64:
          return `${D}=${k};${DH}=${kh};`;
        // loads
        case 0x61:
          return `{${addr(s, 4)}${D}=VIEWS[id].getInt32(a,true);${DH}=0;}`;
        case 0x69:
          return `{${addr(s, 2)}${D}=VIEWS[id].getUint16(a,true);${DH}=0;}`;
        case 0x89:
          return `{${addr(s, 2)}${D}=VIEWS[id].getInt16(a,true);${DH}=${D}>>31;}`;
        case 0x71:
          return `{${addr(s, 1)}${D}=BYTES[id][a];${DH}=0;}`;
        case 0x91:
          return `{${addr(s, 1)}${D}=(BYTES[id][a]<<24)>>24;${DH}=${D}>>31;}`;
        case 0x81:
          return `{${addr(s, 4)}${D}=VIEWS[id].getInt32(a,true);${DH}=${D}>>31;}`;
        case 0x79:
          return `{${addr(s, 8)}const v=VIEWS[id];${D}=v.getInt32(a,true);${DH}=v.getInt32(a+4,true);}`;
        // stores
        case 0x62:
          return `{${addr(d, 4)}VIEWS[id].setInt32(a,${k},true);}`;
        case 0x63:
          return `{${addr(d, 4)}VIEWS[id].setInt32(a,${S},true);}`;
        case 0x6a:
          return `{${addr(d, 2)}VIEWS[id].setInt16(a,${k},true);}`;
        case 0x6b:
          return `{${addr(d, 2)}VIEWS[id].setInt16(a,${S},true);}`;
        case 0x72:
          return `{${addr(d, 1)}BYTES[id][a]=${k};}`;
        case 0x73:
          return `{${addr(d, 1)}BYTES[id][a]=${S};}`;
        case 0x7a:
          return `{${addr(d, 8)}const v=VIEWS[id];v.setInt32(a,${k},true);v.setInt32(a+4,${kh},true);}`;
        case 0x7b:
          return `{${addr(d, 8)}const v=VIEWS[id];v.setInt32(a,${S},true);v.setInt32(a+4,${SH},true);}`;
        case 0xc3: {
          const fetch = (k & 1) !== 0 ? `${S}=old;${SH}=0;` : '';
          const base = `{${addr(d, 4)}const v=VIEWS[id],old=v.getInt32(a,true);`;
          switch (k & 0xf0) {
            case 0x00:
              return `${base}v.setInt32(a,(old+${S})|0,true);${fetch}}`;
            case 0x40:
              return `${base}v.setInt32(a,old|${S},true);${fetch}}`;
            case 0x50:
              return `${base}v.setInt32(a,old&${S},true);${fetch}}`;
            case 0xa0:
              return `${base}v.setInt32(a,old^${S},true);${fetch}}`;
            case 0xe0:
              return `${base}v.setInt32(a,${S},true);${fetch}}`;
            default:
              return `${base}if(old===l0)v.setInt32(a,${S},true);l0=old;h0=0;}`;
          }
        }
        case 0xdb: {
          const fetch = (k & 1) !== 0 ? `${S}=ol;${SH}=oh;` : '';
          const base = `{${addr(d, 8)}const v=VIEWS[id],ol=v.getInt32(a,true),oh=v.getInt32(a+4,true);`;
          const put = (lo: string, hi: string) => `v.setInt32(a,${lo},true);v.setInt32(a+4,${hi},true);`;
          switch (k & 0xf0) {
            case 0x00:
              return `${base}const s=(ol>>>0)+(${S}>>>0);${put('s|0', `(oh+${SH}+(s>0xffffffff?1:0))|0`)}${fetch}}`;
            case 0x40:
              return `${base}${put(`ol|${S}`, `oh|${SH}`)}${fetch}}`;
            case 0x50:
              return `${base}${put(`ol&${S}`, `oh&${SH}`)}${fetch}}`;
            case 0xa0:
              return `${base}${put(`ol^${S}`, `oh^${SH}`)}${fetch}}`;
            case 0xe0:
              return `${base}${put(S, SH)}${fetch}}`;
            default:
              return `${base}if(ol===l0&&oh===h0){${put(S, SH)}}l0=ol;h0=oh;}`;
          }
        }
        // jumps
        case 0x05:
        case 0x06: {
          const t = TGT[i] as number;
          return `pc=${t};${budgetCheck(t)}continue exec;`;
        }
        case 0x95:
          return `pc=${i};status=0;break exec;`;
        case 0x85: {
          // helper call: registers to memory, call, r0 back
          return (
            `${sync}vm.lastPc=${i};vm.lastProgram=vm.currentProgram;vm.frame=0;` +
            `{const act=HELPERS[${k}](vm);l0=L[0]|0;h0=H[0]|0;` +
            `if(act!==0){n-=${after};pc=${i};if(act===${HelperAction.exit}){status=0;break exec;}vm.faultMsg='helper';status=1;break exec;}}` +
            `${budgetCheck(i + 1)}`
          );
        }
        default: {
          const cond = condition(o, D, DH, vL, vH);
          if (cond === undefined) return `n-=${after};pc=${i};vm.faultMsg='invalid opcode 0x${o.toString(16)}';status=1;break exec;`;
          const t = TGT[i] as number;
          return `if(${cond}){pc=${t};${budgetCheck(t)}continue exec;}`;
        }
      }
    }
    if (o === InternalOp.loadImm64) i++;
  }
  out.push(`default:vm.faultMsg='compiled code lost its way';status=1;break exec;`);
  out.push('}}');
  out.push(`${sync}vm.insnCount=n;`);
  out.push('return vm.conclude(vm.currentProgram,pc,n,0,status);};');
  return out.join('\n');
}

function condition(o: number, a: string, ah: string, b: string, bh: string): string | undefined {
  const is32 = (o & 0x07) === 0x06;
  const u = (x: string) => `(${x}>>>0)`;
  if (is32) {
    switch (o & 0xf0) {
      case 0x10:
        return `${a}===${b}`;
      case 0x20:
        return `${u(a)}>${u(b)}`;
      case 0x30:
        return `${u(a)}>=${u(b)}`;
      case 0x40:
        return `(${a}&${b})!==0`;
      case 0x50:
        return `${a}!==${b}`;
      case 0x60:
        return `${a}>${b}`;
      case 0x70:
        return `${a}>=${b}`;
      case 0xa0:
        return `${u(a)}<${u(b)}`;
      case 0xb0:
        return `${u(a)}<=${u(b)}`;
      case 0xc0:
        return `${a}<${b}`;
      case 0xd0:
        return `${a}<=${b}`;
      default:
        return undefined;
    }
  }
  if ((o & 0x07) !== 0x05) return undefined;
  const cmpU = (rel: string) =>
    `(${u(ah)}!==${u(bh)}?${u(ah)}${rel}${u(bh)}:${u(a)}${rel}${u(b)})`;
  const cmpS = (rel: string) => `(${ah}!==${bh}?${ah}${rel}${bh}:${u(a)}${rel}${u(b)})`;
  switch (o & 0xf0) {
    case 0x10:
      return `(${a}===${b}&&${ah}===${bh})`;
    case 0x20:
      return cmpU('>');
    case 0x30:
      return cmpU('>=');
    case 0x40:
      return `((${a}&${b})!==0||(${ah}&${bh})!==0)`;
    case 0x50:
      return `(${a}!==${b}||${ah}!==${bh})`;
    case 0x60:
      return cmpS('>');
    case 0x70:
      return cmpS('>=');
    case 0xa0:
      return cmpU('<');
    case 0xb0:
      return cmpU('<=');
    case 0xc0:
      return cmpS('<');
    case 0xd0:
      return cmpS('<=');
    default:
      return undefined;
  }
}
