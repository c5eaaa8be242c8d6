import { FUNC_REGION, MAP_HANDLE_REGION } from './address.js';
import { VmError } from './errors.js';
import { helperName } from './helper-ids.js';
import { formatInsn } from './insn-text.js';
import { InternalOp } from './internal-op.js';
import { interpreterCode } from './interpreter/interpreter-code.js';

export { InternalOp } from './internal-op.js';

/**
 * A program decoded once into struct-of-arrays typed arrays, one entry per 8-byte slot. The
 * interpreter reads these and nothing else.
 */
export interface LoadedProgram {
  readonly name: string;
  /** Number of 8-byte slots. */
  readonly length: number;
  /** The raw instruction bytes, little-endian `struct bpf_insn`s. */
  readonly bytes: Uint8Array;
  /** Opcode byte, or an {@link InternalOp}. */
  readonly op: Uint8Array;
  /**
   * The interpreter's word per slot: dense instruction id (superinstructions included), dst,
   * src and offset packed in 32 bits (interpreter-code.ts). The compiled tier reads {@link op}.
   */
  readonly insn: Int32Array;
  readonly dst: Uint8Array;
  readonly src: Uint8Array;
  /** Signed 16-bit offset. */
  readonly off: Int32Array;
  /** Signed 32-bit immediate (low half of an `lddw` constant). */
  readonly imm: Int32Array;
  /** High half of a 64-bit immediate: the sign of `imm` for ALU64/JMP, the second word of `lddw`. */
  readonly immHi: Int32Array;
  /** Absolute target slot of a jump or local call. */
  readonly target: Int32Array;
  /** Helper ids the program calls. */
  readonly helpers: ReadonlySet<number>;
  /** Map indexes the program references with `lddw`. */
  readonly maps: ReadonlySet<number>;
}

/** What a loader needs to know about one map the program may reference. */
export interface MapRef {
  /** Region id of the map's value storage (for `BPF_PSEUDO_MAP_VALUE`), when it has one. */
  valueRegion?: number;
  /** Bytes of a value (for the `BPF_PSEUDO_MAP_VALUE` offset check). */
  valueSize: number;
  /** Whether direct value access is allowed (array maps with one entry, like the kernel). */
  directValue?: boolean;
}

export interface LoadOptions {
  /** A name for messages and the runtime's counters. */
  name?: string;
  /** Helper ids that exist; a call to any other id is refused at load, naming it. */
  helpers: ReadonlySet<number> | ((id: number) => boolean);
  /** Maps the program's `lddw` pseudo loads may name, by index (the "fd" is the index). */
  maps?: readonly MapRef[];
}

/** One reason a program was refused, like a kernel verifier log line. */
export interface LoadDiagnostic {
  insnIndex: number;
  insnText: string;
  message: string;
}

export type LoadResult =
  | { ok: true; program: LoadedProgram }
  | { ok: false; code: 'invalid-program' | 'unsupported' | 'unknown-helper' | 'invalid-map'; diagnostics: LoadDiagnostic[] };

const ALU = 0x04;
const ALU64 = 0x07;
const JMP = 0x05;
const JMP32 = 0x06;

/**
 * Decodes and checks raw instruction bytes. A refused program is a result with diagnostics,
 * not an exception: every slot is checked and each problem listed (instruction index, text,
 * reason).
 */
export function loadProgram(bytes: Uint8Array, options: LoadOptions): LoadResult {
  const diagnostics: LoadDiagnostic[] = [];
  let code: 'invalid-program' | 'unsupported' | 'unknown-helper' | 'invalid-map' = 'invalid-program';
  if (bytes.length === 0 || bytes.length % 8 !== 0) {
    return {
      ok: false,
      code,
      diagnostics: [
        {
          insnIndex: 0,
          insnText: '',
          message:
            bytes.length === 0
              ? 'empty program'
              : `program length ${bytes.length} is not a multiple of 8 bytes`,
        },
      ],
    };
  }
  const n = bytes.length / 8;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const op = new Uint8Array(n);
  const dst = new Uint8Array(n);
  const src = new Uint8Array(n);
  const off = new Int32Array(n);
  const imm = new Int32Array(n);
  const immHi = new Int32Array(n);
  const target = new Int32Array(n).fill(-1);
  const isTail = new Uint8Array(n);
  const helpers = new Set<number>();
  const maps = new Set<number>();
  /** lddw slots loading a callback's address (their imm is its instruction index). */
  const funcRefs: number[] = [];
  const hasHelper =
    typeof options.helpers === 'function'
      ? options.helpers
      : (id: number) => (options.helpers as ReadonlySet<number>).has(id);

  const refuse = (i: number, message: string, c: typeof code = 'invalid-program') => {
    if (diagnostics.length === 0) code = c;
    diagnostics.push({ insnIndex: i, insnText: formatInsn(bytes, i), message });
  };

  for (let i = 0; i < n; i++) {
    const b = i * 8;
    const opcode = bytes[b] as number;
    const regs = bytes[b + 1] as number;
    const d = regs & 0x0f;
    const s = regs >> 4;
    const o = view.getInt16(b + 2, true);
    const k = view.getInt32(b + 4, true);
    op[i] = opcode;
    dst[i] = d;
    src[i] = s;
    off[i] = o;
    imm[i] = k;
    immHi[i] = k >> 31;
    const cls = opcode & 0x07;

    if (cls === ALU || cls === ALU64) {
      const aluOp = opcode & 0xf0;
      const isReg = (opcode & 0x08) !== 0;
      if (d > 9) refuse(i, `dst register r${d} is not writable`);
      if (aluOp === 0xd0) {
        // BPF_END: le/be (ALU), bswap (ALU64 with source bit 0)
        if (cls === ALU64 && isReg) refuse(i, `unknown opcode 0x${hex2(opcode)}`);
        else if (s !== 0 || o !== 0) refuse(i, 'reserved fields src and offset must be 0');
        else if (k !== 16 && k !== 32 && k !== 64) refuse(i, `byte swap width ${k} is not 16, 32 or 64`);
        else {
          const width = k === 16 ? 0 : k === 32 ? 1 : 2;
          if (cls === ALU64) op[i] = [InternalOp.bswap16, InternalOp.bswap32, InternalOp.bswap64][width] as number;
          else if (isReg) op[i] = [InternalOp.be16, InternalOp.be32, InternalOp.be64][width] as number;
          else op[i] = [InternalOp.le16, InternalOp.le32, InternalOp.le64][width] as number;
        }
      } else if (aluOp === 0xe0 || aluOp === 0xf0) {
        refuse(i, `unknown opcode 0x${hex2(opcode)}`);
      } else if (aluOp === 0x80) {
        // BPF_NEG: source bit, src, imm and offset must be 0
        if (isReg) refuse(i, `unknown opcode 0x${hex2(opcode)}`);
        else if (s !== 0 || k !== 0 || o !== 0) refuse(i, 'reserved fields src, imm and offset must be 0');
      } else {
        if (isReg) {
          if (s > 10) refuse(i, `src register r${s} does not exist`);
          if (k !== 0) refuse(i, 'reserved field imm must be 0');
        } else if (s !== 0) {
          refuse(i, 'reserved field src must be 0');
        }
        const signedDivMod = aluOp === 0x30 || aluOp === 0x90;
        if (signedDivMod && o === 1) {
          const is64 = cls === ALU64;
          const isMod = aluOp === 0x90;
          op[i] = isMod
            ? is64
              ? isReg
                ? InternalOp.smod64Reg
                : InternalOp.smod64Imm
              : isReg
                ? InternalOp.smod32Reg
                : InternalOp.smod32Imm
            : is64
              ? isReg
                ? InternalOp.sdiv64Reg
                : InternalOp.sdiv64Imm
              : isReg
                ? InternalOp.sdiv32Reg
                : InternalOp.sdiv32Imm;
        } else if (aluOp === 0xb0 && isReg && o !== 0) {
          // MOVSX: offset 8/16 (32-bit) or 8/16/32 (64-bit)
          if (cls === ALU && o === 8) op[i] = InternalOp.movsx8To32;
          else if (cls === ALU && o === 16) op[i] = InternalOp.movsx16To32;
          else if (cls === ALU64 && o === 8) op[i] = InternalOp.movsx8To64;
          else if (cls === ALU64 && o === 16) op[i] = InternalOp.movsx16To64;
          else if (cls === ALU64 && o === 32) op[i] = InternalOp.movsx32To64;
          else refuse(i, `sign-extending move offset ${o} is not ${cls === ALU ? '8 or 16' : '8, 16 or 32'}`);
        } else if (o !== 0) {
          refuse(i, `reserved field offset must be 0, is ${o}`);
        }
      }
    } else if (cls === JMP || cls === JMP32) {
      const jmpOp = opcode & 0xf0;
      const isReg = (opcode & 0x08) !== 0;
      if (jmpOp === 0x00) {
        if (isReg) refuse(i, `unknown opcode 0x${hex2(opcode)}`);
        else if (cls === JMP) {
          if (d !== 0 || s !== 0 || k !== 0) refuse(i, 'reserved fields dst, src and imm of ja must be 0');
          else target[i] = i + 1 + o;
        } else if (d !== 0 || s !== 0 || o !== 0) {
          refuse(i, 'reserved fields dst, src and offset of gotol must be 0');
        } else target[i] = i + 1 + k;
      } else if (jmpOp === 0x80) {
        if (cls === JMP32) refuse(i, `unknown opcode 0x${hex2(opcode)}`);
        else if (isReg) {
          // callx: the register holding the helper id is dst (the LLVM encoding); an older
          // encoding put it in imm.
          if (s !== 0 || o !== 0) refuse(i, 'reserved fields src and offset of callx must be 0');
          else if (d === 0 && k >= 0 && k <= 10) {
            src[i] = k;
            op[i] = InternalOp.callReg;
          } else if (d <= 10 && k === 0) {
            src[i] = d;
            op[i] = InternalOp.callReg;
          } else refuse(i, 'callx register does not exist');
        } else if (d !== 0 || o !== 0) refuse(i, 'reserved fields dst and offset of call must be 0');
        else if (s === 0) {
          if (!hasHelper(k)) refuse(i, `unknown helper ${k} (${helperName(k)})`, 'unknown-helper');
          else helpers.add(k);
        } else if (s === 1) {
          op[i] = InternalOp.callLocal;
          target[i] = i + 1 + k;
        } else if (s === 2) refuse(i, `kfunc call ${k} is not supported`, 'unsupported');
        else refuse(i, `call with unknown src ${s}`);
      } else if (jmpOp === 0x90) {
        if (cls === JMP32 || isReg) refuse(i, `unknown opcode 0x${hex2(opcode)}`);
        else if (d !== 0 || s !== 0 || k !== 0 || o !== 0) refuse(i, 'reserved fields of exit must be 0');
      } else if (jmpOp === 0xe0 || jmpOp === 0xf0) {
        refuse(i, `unknown opcode 0x${hex2(opcode)}`);
      } else {
        if (d > 10) refuse(i, `dst register r${d} does not exist`);
        if (isReg) {
          if (s > 10) refuse(i, `src register r${s} does not exist`);
          if (k !== 0) refuse(i, 'reserved field imm must be 0');
        } else if (s !== 0) refuse(i, 'reserved field src must be 0');
        target[i] = i + 1 + o;
      }
    } else if (cls === 0x00) {
      // BPF_LD: only lddw (0x18); the legacy packet loads are refused
      if (opcode === 0x18) {
        if (i + 1 >= n) refuse(i, 'lddw is missing its second slot');
        else {
          const b2 = b + 8;
          if (bytes[b2] !== 0 || bytes[b2 + 1] !== 0 || view.getInt16(b2 + 2, true) !== 0) {
            refuse(i, 'second slot of lddw must have opcode, registers and offset 0');
          }
          if (d > 9) refuse(i, `dst register r${d} is not writable`);
          if (o !== 0) refuse(i, 'reserved field offset of lddw must be 0');
          const k2 = view.getInt32(b2 + 4, true);
          immHi[i] = k2;
          isTail[i + 1] = 1;
          op[i + 1] = InternalOp.lddwTail;
          if (s === 0) {
            // plain 64-bit constant
          } else if (s === 1 || s === 5 || s === 2 || s === 6) {
            // BPF_PSEUDO_MAP_FD / MAP_IDX: a map handle; MAP_VALUE / MAP_IDX_VALUE: an address
            const mapRef = options.maps?.[k];
            if (mapRef === undefined) refuse(i, `lddw names map ${k}, which does not exist`, 'invalid-map');
            else {
              maps.add(k);
              if (s === 1 || s === 5) {
                if (k2 !== 0) refuse(i, 'second imm of a map handle load must be 0');
                imm[i] = k;
                immHi[i] = MAP_HANDLE_REGION;
              } else if (mapRef.valueRegion === undefined || mapRef.directValue === false) {
                refuse(i, `map ${k} has no direct value access`, 'invalid-map');
              } else if (k2 < 0 || k2 >= mapRef.valueSize) {
                refuse(i, `value offset ${k2} is outside map ${k}'s ${mapRef.valueSize}-byte value`, 'invalid-map');
              } else {
                imm[i] = k2;
                immHi[i] = mapRef.valueRegion;
              }
            }
          } else if (s === 4) {
            // BPF_PSEUDO_FUNC: the address of a callback (for bpf_loop), imm = its offset
            if (k2 !== 0) refuse(i, 'second imm of a function address load must be 0');
            imm[i] = i + 1 + k;
            immHi[i] = FUNC_REGION;
            funcRefs.push(i);
          } else {
            refuse(i, `lddw pseudo source ${s} is not supported`, 'unsupported');
          }
          op[i] = InternalOp.loadImm64;
          i++;
        }
      } else if ([0x20, 0x28, 0x30, 0x38, 0x40, 0x48, 0x50, 0x58].includes(opcode)) {
        refuse(i, 'legacy packet access (LD ABS/IND) is not supported by this VM', 'unsupported');
      } else refuse(i, `unknown opcode 0x${hex2(opcode)}`);
    } else if (cls === 0x01) {
      // BPF_LDX: MEM (0x61 0x69 0x71 0x79) and MEMSX (0x81 0x89 0x91)
      const ok = [0x61, 0x69, 0x71, 0x79, 0x81, 0x89, 0x91].includes(opcode);
      if (!ok) refuse(i, `unknown opcode 0x${hex2(opcode)}`);
      else if (k !== 0) refuse(i, 'reserved field imm of a load must be 0');
      else if (d > 9) refuse(i, `dst register r${d} is not writable`);
      else if (s > 10) refuse(i, `src register r${s} does not exist`);
    } else if (cls === 0x02) {
      const ok = [0x62, 0x6a, 0x72, 0x7a].includes(opcode);
      if (!ok) refuse(i, `unknown opcode 0x${hex2(opcode)}`);
      else if (s !== 0) refuse(i, 'reserved field src of a store must be 0');
      else if (d > 10) refuse(i, `dst register r${d} does not exist`);
    } else {
      // BPF_STX: MEM and ATOMIC (0xc3 word, 0xdb double word)
      if ([0x63, 0x6b, 0x73, 0x7b].includes(opcode)) {
        if (k !== 0) refuse(i, 'reserved field imm of a store must be 0');
        else if (d > 10 || s > 10) refuse(i, 'register does not exist');
      } else if (opcode === 0xc3 || opcode === 0xdb) {
        const ok = [0x00, 0x01, 0x40, 0x41, 0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1].includes(k);
        if (!ok) refuse(i, `unknown atomic operation 0x${(k >>> 0).toString(16)}`);
        else if (d > 10 || s > 10) refuse(i, 'register does not exist');
      } else refuse(i, `unknown opcode 0x${hex2(opcode)}`);
    }
  }

  // Jump targets must land on an instruction start inside the program.
  for (let i = 0; i < n; i++) {
    const t = target[i] as number;
    if (t === -1) continue;
    if (t < 0 || t >= n) refuse(i, `jump target ${t} is outside the program (0..${n - 1})`);
    else if (isTail[t]) refuse(i, `jump target ${t} is the second slot of an lddw`);
  }
  for (const i of funcRefs) {
    const t = imm[i] as number;
    if (t < 0 || t >= n) refuse(i, `callback ${t} is outside the program (0..${n - 1})`);
    else if (isTail[t]) refuse(i, `callback ${t} is the second slot of an lddw`);
  }
  const last = op[n - 1] as number;
  if (diagnostics.length === 0 && last !== 0x95 && last !== 0x05 && last !== 0x06) {
    refuse(n - 1, 'the last instruction must be exit or an unconditional jump');
  }
  if (diagnostics.length > 0) return { ok: false, code, diagnostics };
  return {
    ok: true,
    program: {
      name: options.name ?? 'program',
      length: n,
      bytes: bytes.slice(),
      op,
      insn: interpreterCode(op, dst, src, off),
      dst,
      src,
      off,
      imm,
      immHi,
      target,
      helpers,
      maps,
    },
  };
}

/** {@link loadProgram}, throwing a {@link VmError} that lists the diagnostics on refusal. */
export function loadProgramOrThrow(bytes: Uint8Array, options: LoadOptions): LoadedProgram {
  const r = loadProgram(bytes, options);
  if (r.ok) return r.program;
  const first = r.diagnostics[0];
  const lines = r.diagnostics.map((d) => `${d.insnIndex}: (${d.insnText}) ${d.message}`);
  throw new VmError(r.code, `load program: ${lines.join('; ')}`, {
    insnIndex: first?.insnIndex,
    insnText: first?.insnText,
  });
}

function hex2(b: number): string {
  return b.toString(16).padStart(2, '0');
}
