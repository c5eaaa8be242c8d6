// The interpreter: one `switch` over the dense codes of interpreter-code.ts in one function (it
// is fast because the hot loop makes no calls), BPF-to-BPF frames and `bpf_loop` callbacks.
// Functions over `this: InterpreterHost`, installed on `Vm`'s prototype (vm.ts), which
// implements the host: this folder imports the layers below (memory model, helper calling
// convention), never vm.ts.

import { FUNC_REGION, MAX_FRAMES, STACK_FRAME_SIZE, STACK_REGION, STACK_TOP } from '../address.js';
import { isCallbackEntry } from '../callbacks.js';
import { HelperAction, type HelperFn, type HelperHost } from '../helpers/helper-fn.js';
import { HelperId } from '../helper-ids.js';
import { Errno } from '../maps/errno.js';
import type { LoadedProgram } from '../program.js';
import { RunStatus, TAIL_CALL } from '../run-status.js';
import { mul64, sdivmod64, udivmod64, wide } from '../wide.js';

/**
 * The part of the VM the interpreter uses (`Vm` implements it; the memory model's members —
 * registers, regions, faults, `conclude` — are documented in memory/vm-memory.ts, the frames,
 * helper table and tail calls in vm.ts).
 */
export interface InterpreterHost extends HelperHost {
  readonly budget: number;
  /** First accessible byte of each region (the stack: the bottom of the current frame). */
  regionLow: Int32Array;
  readonly helperTable: (HelperFn | undefined)[];
  /** Per frame: where it returns to, its saved r6-r10, the `bpf_loop` it runs. */
  readonly frameReturn: Int32Array;
  readonly frameSaved: Int32Array;
  readonly frameLoop: Int32Array;
  lastProgram: LoadedProgram | undefined;
  lastPc: number;
  faultBase: number;
  faultSize: number;
  faultMsg: string;
  conclude(prog: LoadedProgram, pc: number, n: number, frame: number, status: number): number;
  enterLoopCallback(frame: number, index: number): number;
  pushFrame(frame: number, returnPc: number): void;
}

/**
 * The interpreter loop over one program, starting at pc 0 with `n` instructions already
 * executed. Returns a {@link RunStatus}, or TAIL_CALL with the target in `tailTarget`.
 *
 * Shape (each point measured with `pnpm bench`): one `switch` over the dense codes of
 * interpreter-code.ts (a jump table; every label a numeric literal), one packed word per slot
 * (code, dst, src, offset) plus the immediate, superinstructions for common pairs, and a hot
 * inner loop without calls: helper calls, BPF-to-BPF calls and 64-bit division leave it for
 * the outer loop, which reads every array again before re-entering, so V8 checks the typed
 * arrays' maps once per entry instead of at every access (a call would make it forget them).
 */
export function interpret(this: InterpreterHost, prog: LoadedProgram, startCount: number): number {
  const INSN = prog.insn;
  const IMM = prog.imm;
  const IMMHI = prog.immHi;
  const L = this.regLo;
  const H = this.regHi;
  const LEN = this.regionLength;
  const LOW = this.regionLow;
  const VIEWS = this.regionViews;
  const BYTES = this.regionBytes;
  const NR = LEN.length;
  const HELPERS = this.helperTable;
  const budget = this.budget;
  let pc = 0;
  let n = startCount;
  let frame = 0;
  let status: number = RunStatus.ok;
  this.faultBase = -1;
  this.faultSize = 0;
  this.faultMsg = '';

  let slow = false;
  let w = 0;

  run: for (;;) {
    // read every array once before the hot loop: V8 then checks their maps here, and (the
    // hot loop making no calls) not again per access inside it
    w = (INSN[pc] as number) | (IMM[pc] as number) | (IMMHI[pc] as number) | (L[0] as number) | (H[0] as number);
    w |= (LEN[0] as number) | (LOW[0] as number);
    exec: for (;;) {
      n++;
      // the slot's packed word: code | dst << 8 | src << 12 | offset << 16 (interpreter-code.ts);
      // one jump table over the dense codes, so the labels must stay numeric literals
      w = INSN[pc] as number;
      switch (w & 0xff) {
        case 137: { // addImmJneImm: rX += imm; if rX != imm2 goto
          const d = (w >> 8) & 15;
          const k = IMM[pc] as number;
          const x = ((L[d] as number) + k) | 0;
          const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
          L[d] = x;
          H[d] = h;
          n++;
          pc++;
          w = INSN[pc] as number;
          if (x !== IMM[pc] || h !== (IMM[pc] as number) >> 31) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 147: { // addImmAddImmJneImm: rA += imm; rB += imm2; if rB != imm3 goto
          const d = (w >> 8) & 15;
          const k = IMM[pc] as number;
          const x = ((L[d] as number) + k) | 0;
          H[d] = ((H[d] as number) + (k >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
          L[d] = x;
          pc++;
          w = INSN[pc] as number;
          const d2 = (w >> 8) & 15;
          const k2 = IMM[pc] as number;
          const y = ((L[d2] as number) + k2) | 0;
          const h = ((H[d2] as number) + (k2 >> 31) + (y >>> 0 < k2 >>> 0 ? 1 : 0)) | 0;
          L[d2] = y;
          H[d2] = h;
          n += 2;
          pc++;
          w = INSN[pc] as number;
          if (y !== IMM[pc] || h !== (IMM[pc] as number) >> 31) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 148: { // scanLdxb: rX = *(u8 *)(rY + off); rZ += rX; rA += k; rB += k2; if rB != c goto
          // the canonical scanning loop (load, accumulate, advance, count down, branch) in its
          // usual shape: while the branch comes back here, loop in this case with the registers
          // in locals, each iteration counting five and checking the budget on the taken branch
          // as the jump would, a fault on the load leaving the pc and count of the load; the
          // load's region looked up again only when the pointer's region id changes. Registers
          // in another shape: the load + add pair alone (the triple after it keeps its code)
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 8) & 15;
          if (ra === s && d !== s && d !== d2 && d !== rb && d2 !== s && d2 !== rb && rb !== s) {
            // pointer, loaded value, sum and counter four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            let bl = L[rb] as number;
            let bh = H[rb] as number;
            const ka = IMM[pc + 2] as number;
            const kb = IMM[pc + 3] as number;
            const c = IMM[pc + 4] as number;
            const target = pc + 5 + ((INSN[pc + 4] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: Uint8Array | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = LEN[id] as number;
                mem = BYTES[id] as Uint8Array;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as Uint8Array)[a] as number;
              xh = 0;
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              const z = (bl + kb) | 0;
              bh = (bh + (kb >> 31) + (z >>> 0 < kb >>> 0 ? 1 : 0)) | 0;
              bl = z;
              n += 4;
              if (z === c && bh === c >> 31) {
                pc = start + 5;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            L[rb] = bl;
            H[rb] = bh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 1;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 1;
            break exec;
          }
          const v = (BYTES[id] as Uint8Array)[a] as number;
          const vh = 0;
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 149: { // scanLdxh: rX = *(u16 *)(rY + off); rZ += rX; rA += k; rB += k2; if rB != c goto
          // the canonical scanning loop (load, accumulate, advance, count down, branch) in its
          // usual shape: while the branch comes back here, loop in this case with the registers
          // in locals, each iteration counting five and checking the budget on the taken branch
          // as the jump would, a fault on the load leaving the pc and count of the load; the
          // load's region looked up again only when the pointer's region id changes. Registers
          // in another shape: the load + add pair alone (the triple after it keeps its code)
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 8) & 15;
          if (ra === s && d !== s && d !== d2 && d !== rb && d2 !== s && d2 !== rb && rb !== s) {
            // pointer, loaded value, sum and counter four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            let bl = L[rb] as number;
            let bh = H[rb] as number;
            const ka = IMM[pc + 2] as number;
            const kb = IMM[pc + 3] as number;
            const c = IMM[pc + 4] as number;
            const target = pc + 5 + ((INSN[pc + 4] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: DataView | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = (LEN[id] as number) - 1;
                mem = VIEWS[id] as DataView;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as DataView).getUint16(a, true);
              xh = 0;
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              const z = (bl + kb) | 0;
              bh = (bh + (kb >> 31) + (z >>> 0 < kb >>> 0 ? 1 : 0)) | 0;
              bl = z;
              n += 4;
              if (z === c && bh === c >> 31) {
                pc = start + 5;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            L[rb] = bl;
            H[rb] = bh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 2;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 2;
            break exec;
          }
          const v = (VIEWS[id] as DataView).getUint16(a, true);
          const vh = 0;
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 150: { // scanLdxw: rX = *(u32 *)(rY + off); rZ += rX; rA += k; rB += k2; if rB != c goto
          // the canonical scanning loop (load, accumulate, advance, count down, branch) in its
          // usual shape: while the branch comes back here, loop in this case with the registers
          // in locals, each iteration counting five and checking the budget on the taken branch
          // as the jump would, a fault on the load leaving the pc and count of the load; the
          // load's region looked up again only when the pointer's region id changes. Registers
          // in another shape: the load + add pair alone (the triple after it keeps its code)
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 8) & 15;
          if (ra === s && d !== s && d !== d2 && d !== rb && d2 !== s && d2 !== rb && rb !== s) {
            // pointer, loaded value, sum and counter four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            let bl = L[rb] as number;
            let bh = H[rb] as number;
            const ka = IMM[pc + 2] as number;
            const kb = IMM[pc + 3] as number;
            const c = IMM[pc + 4] as number;
            const target = pc + 5 + ((INSN[pc + 4] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: DataView | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = (LEN[id] as number) - 3;
                mem = VIEWS[id] as DataView;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as DataView).getInt32(a, true);
              xh = 0;
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              const z = (bl + kb) | 0;
              bh = (bh + (kb >> 31) + (z >>> 0 < kb >>> 0 ? 1 : 0)) | 0;
              bl = z;
              n += 4;
              if (z === c && bh === c >> 31) {
                pc = start + 5;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            L[rb] = bl;
            H[rb] = bh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 4;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 4;
            break exec;
          }
          const v = (VIEWS[id] as DataView).getInt32(a, true);
          const vh = 0;
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 151: { // scanLdxdw: rX = *(u64 *)(rY + off); rZ += rX; rA += k; rB += k2; if rB != c goto
          // the canonical scanning loop (load, accumulate, advance, count down, branch) in its
          // usual shape: while the branch comes back here, loop in this case with the registers
          // in locals, each iteration counting five and checking the budget on the taken branch
          // as the jump would, a fault on the load leaving the pc and count of the load; the
          // load's region looked up again only when the pointer's region id changes. Registers
          // in another shape: the load + add pair alone (the triple after it keeps its code)
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 8) & 15;
          if (ra === s && d !== s && d !== d2 && d !== rb && d2 !== s && d2 !== rb && rb !== s) {
            // pointer, loaded value, sum and counter four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            let bl = L[rb] as number;
            let bh = H[rb] as number;
            const ka = IMM[pc + 2] as number;
            const kb = IMM[pc + 3] as number;
            const c = IMM[pc + 4] as number;
            const target = pc + 5 + ((INSN[pc + 4] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: DataView | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = (LEN[id] as number) - 7;
                mem = VIEWS[id] as DataView;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as DataView).getInt32(a, true);
              xh = (mem as DataView).getInt32(a + 4, true);
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              const z = (bl + kb) | 0;
              bh = (bh + (kb >> 31) + (z >>> 0 < kb >>> 0 ? 1 : 0)) | 0;
              bl = z;
              n += 4;
              if (z === c && bh === c >> 31) {
                pc = start + 5;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            L[rb] = bl;
            H[rb] = bh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 8;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 8;
            break exec;
          }
          const v = (VIEWS[id] as DataView).getInt32(a, true);
          const vh = (VIEWS[id] as DataView).getInt32(a + 4, true);
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 152: { // scanUpLdxb: rX = *(u8 *)(rY + off); rZ += rX; rA += k; if rA < rE goto
          // as the scanning loops above, for the up-counting shape (a pointer stepped towards an
          // end register): four slots
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 12) & 15;
          if (ra === s && d !== s && d !== d2 && d2 !== s && rb !== s && rb !== d && rb !== d2) {
            // pointer, loaded value, sum and end four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            const el = (L[rb] as number) >>> 0;
            const eh = (H[rb] as number) >>> 0;
            const ka = IMM[pc + 2] as number;
            const target = pc + 4 + ((INSN[pc + 3] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: Uint8Array | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = LEN[id] as number;
                mem = BYTES[id] as Uint8Array;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as Uint8Array)[a] as number;
              xh = 0;
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              n += 3;
              if (!(ph >>> 0 !== eh ? ph >>> 0 < eh : y >>> 0 < el)) {
                pc = start + 4;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 1;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 1;
            break exec;
          }
          const v = (BYTES[id] as Uint8Array)[a] as number;
          const vh = 0;
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 153: { // scanUpLdxh: rX = *(u16 *)(rY + off); rZ += rX; rA += k; if rA < rE goto
          // as the scanning loops above, for the up-counting shape (a pointer stepped towards an
          // end register): four slots
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 12) & 15;
          if (ra === s && d !== s && d !== d2 && d2 !== s && rb !== s && rb !== d && rb !== d2) {
            // pointer, loaded value, sum and end four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            const el = (L[rb] as number) >>> 0;
            const eh = (H[rb] as number) >>> 0;
            const ka = IMM[pc + 2] as number;
            const target = pc + 4 + ((INSN[pc + 3] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: DataView | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = (LEN[id] as number) - 1;
                mem = VIEWS[id] as DataView;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as DataView).getUint16(a, true);
              xh = 0;
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              n += 3;
              if (!(ph >>> 0 !== eh ? ph >>> 0 < eh : y >>> 0 < el)) {
                pc = start + 4;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 2;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 2;
            break exec;
          }
          const v = (VIEWS[id] as DataView).getUint16(a, true);
          const vh = 0;
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 154: { // scanUpLdxw: rX = *(u32 *)(rY + off); rZ += rX; rA += k; if rA < rE goto
          // as the scanning loops above, for the up-counting shape (a pointer stepped towards an
          // end register): four slots
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 12) & 15;
          if (ra === s && d !== s && d !== d2 && d2 !== s && rb !== s && rb !== d && rb !== d2) {
            // pointer, loaded value, sum and end four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            const el = (L[rb] as number) >>> 0;
            const eh = (H[rb] as number) >>> 0;
            const ka = IMM[pc + 2] as number;
            const target = pc + 4 + ((INSN[pc + 3] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: DataView | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = (LEN[id] as number) - 3;
                mem = VIEWS[id] as DataView;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as DataView).getInt32(a, true);
              xh = 0;
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              n += 3;
              if (!(ph >>> 0 !== eh ? ph >>> 0 < eh : y >>> 0 < el)) {
                pc = start + 4;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 4;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 4;
            break exec;
          }
          const v = (VIEWS[id] as DataView).getInt32(a, true);
          const vh = 0;
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 155: { // scanUpLdxdw: rX = *(u64 *)(rY + off); rZ += rX; rA += k; if rA < rE goto
          // as the scanning loops above, for the up-counting shape (a pointer stepped towards an
          // end register): four slots
          const s = (w >> 12) & 15;
          const d = (w >> 8) & 15;
          const off = w >> 16;
          const d2 = ((INSN[pc + 1] as number) >> 8) & 15;
          const ra = ((INSN[pc + 2] as number) >> 8) & 15;
          const rb = ((INSN[pc + 3] as number) >> 12) & 15;
          if (ra === s && d !== s && d !== d2 && d2 !== s && rb !== s && rb !== d && rb !== d2) {
            // pointer, loaded value, sum and end four registers, in locals
            const start = pc;
            let pl = L[s] as number;
            let ph = H[s] as number;
            let xl = L[d] as number;
            let xh = H[d] as number;
            let zl = L[d2] as number;
            let zh = H[d2] as number;
            const el = (L[rb] as number) >>> 0;
            const eh = (H[rb] as number) >>> 0;
            const ka = IMM[pc + 2] as number;
            const target = pc + 4 + ((INSN[pc + 3] as number) >> 16);
            let cid = -1;
            let lo = 0;
            let hi = 0;
            let mem: DataView | undefined;
            let leave = 0; // 1: the load faults, 2: out of budget
            for (;;) {
              const a = (pl >>> 0) + off;
              if (ph !== cid) {
                if (ph <= 0 || ph >= NR) {
                  leave = 1;
                  break;
                }
                const id = ph;
                cid = id;
                lo = LOW[id] as number;
                hi = (LEN[id] as number) - 7;
                mem = VIEWS[id] as DataView;
              }
              if (a < lo || a >= hi) {
                leave = 1;
                break;
              }
              xl = (mem as DataView).getInt32(a, true);
              xh = (mem as DataView).getInt32(a + 4, true);
              const x = (zl + xl) | 0;
              zh = (zh + xh + (x >>> 0 < xl >>> 0 ? 1 : 0)) | 0;
              zl = x;
              const y = (pl + ka) | 0;
              ph = (ph + (ka >> 31) + (y >>> 0 < ka >>> 0 ? 1 : 0)) | 0;
              pl = y;
              n += 3;
              if (!(ph >>> 0 !== eh ? ph >>> 0 < eh : y >>> 0 < el)) {
                pc = start + 4;
                break;
              }
              pc = target;
              if (n > budget) {
                leave = 2;
                break;
              }
              if (target !== start) break;
              n++;
            }
            L[s] = pl;
            H[s] = ph;
            L[d] = xl;
            H[d] = xh;
            L[d2] = zl;
            H[d2] = zh;
            if (leave === 0) continue;
            if (leave === 2) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
            this.faultBase = s;
            this.faultSize = 8;
            break exec;
          }
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + off;
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 8;
            break exec;
          }
          const v = (VIEWS[id] as DataView).getInt32(a, true);
          const vh = (VIEWS[id] as DataView).getInt32(a + 4, true);
          L[d] = v;
          H[d] = vh;
          n++;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc += 2;
          continue;
        }
        case 138: { // addImmJeqImm: rX += imm; if rX == imm2 goto
          const d = (w >> 8) & 15;
          const k = IMM[pc] as number;
          const x = ((L[d] as number) + k) | 0;
          const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
          L[d] = x;
          H[d] = h;
          n++;
          pc++;
          w = INSN[pc] as number;
          if (x === IMM[pc] && h === (IMM[pc] as number) >> 31) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 144: { // addImmJltReg: rX += imm; if rX < rY goto
          const d = (w >> 8) & 15;
          const k = IMM[pc] as number;
          const x = ((L[d] as number) + k) | 0;
          const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
          L[d] = x;
          H[d] = h;
          n++;
          pc++;
          w = INSN[pc] as number;
          const sr = (w >> 12) & 15;
          const bh = H[sr] as number;
          if (h !== bh ? h >>> 0 < bh >>> 0 : x >>> 0 < (L[sr] as number) >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 139: { // movRshImm: rX = rY; rX >>= imm
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          const lo = L[sr] as number;
          const hi = H[sr] as number;
          const c = (IMM[pc + 1] as number) & 63;
          if (c < 32) {
            L[d] = c === 0 ? lo : (lo >>> c) | (hi << (32 - c));
            H[d] = hi >>> c;
          } else {
            L[d] = hi >>> (c - 32);
            H[d] = 0;
          }
          n++;
          pc += 2;
          continue;
        }
        case 140: { // movLshImm: rX = rY; rX <<= imm
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          const lo = L[sr] as number;
          const hi = H[sr] as number;
          const c = (IMM[pc + 1] as number) & 63;
          if (c < 32) {
            H[d] = c === 0 ? hi : (hi << c) | (lo >>> (32 - c));
            L[d] = lo << c;
          } else {
            H[d] = lo << (c - 32);
            L[d] = 0;
          }
          n++;
          pc += 2;
          continue;
        }
        case 141: { // ldxbAdd: rX = *(u8 *)(rY + off); rZ += rX
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 1;
            break exec;
          }
          const d = (w >> 8) & 15;
          const v = (BYTES[id] as Uint8Array)[a] as number;
          L[d] = v;
          H[d] = 0;
          n++;
          pc++;
          w = INSN[pc] as number;
          w = INSN[pc] as number;
          const d2 = (w >> 8) & 15;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + 0 + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc++;
          continue;
        }
        case 142: { // ldxwAdd: rX = *(u32 *)(rY + off); rZ += rX
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 4;
            break exec;
          }
          const d = (w >> 8) & 15;
          const v = (VIEWS[id] as DataView).getInt32(a, true);
          L[d] = v;
          H[d] = 0;
          n++;
          pc++;
          w = INSN[pc] as number;
          w = INSN[pc] as number;
          const d2 = (w >> 8) & 15;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + 0 + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc++;
          continue;
        }
        case 143: { // ldxdwAdd: rX = *(u64 *)(rY + off); rZ += rX
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 8;
            break exec;
          }
          const d = (w >> 8) & 15;
          const view = VIEWS[id] as DataView;
          const v = view.getInt32(a, true);
          const vh = view.getInt32(a + 4, true);
          L[d] = v;
          H[d] = vh;
          n++;
          pc++;
          w = INSN[pc] as number;
          w = INSN[pc] as number;
          const d2 = (w >> 8) & 15;
          const x = ((L[d2] as number) + v) | 0;
          H[d2] = ((H[d2] as number) + vh + (x >>> 0 < v >>> 0 ? 1 : 0)) | 0;
          L[d2] = x;
          pc++;
          continue;
        }
        case 1: { // add64Imm
          const d = (w >> 8) & 15;
          const k = IMM[pc] as number;
          const x = ((L[d] as number) + k) | 0;
          const h = ((H[d] as number) + ((IMM[pc] as number) >> 31) + (x >>> 0 < k >>> 0 ? 1 : 0)) | 0;
          L[d] = x;
          H[d] = h;
          pc++;
          continue;
        }
        case 2: { // add64Reg
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          const b = L[sr] as number;
          const x = ((L[d] as number) + b) | 0;
          H[d] = ((H[d] as number) + (H[sr] as number) + (x >>> 0 < b >>> 0 ? 1 : 0)) | 0;
          L[d] = x;
          pc++;
          continue;
        }
        case 3: { // sub64Imm
          const d = (w >> 8) & 15;
          const a = L[d] as number;
          const k = IMM[pc] as number;
          L[d] = (a - k) | 0;
          H[d] = ((H[d] as number) - ((IMM[pc] as number) >> 31) - (a >>> 0 < k >>> 0 ? 1 : 0)) | 0;
          pc++;
          continue;
        }
        case 4: { // sub64Reg
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          const a = L[d] as number;
          const b = L[sr] as number;
          L[d] = (a - b) | 0;
          H[d] = ((H[d] as number) - (H[sr] as number) - (a >>> 0 < b >>> 0 ? 1 : 0)) | 0;
          pc++;
          continue;
        }
        case 5: { // mul64Imm
          const d = (w >> 8) & 15;
          L[d] = mul64(L[d] as number, H[d] as number, IMM[pc] as number, (IMM[pc] as number) >> 31);
          H[d] = wide[0] as number;
          pc++;
          continue;
        }
        case 6: { // mul64Reg
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          L[d] = mul64(L[d] as number, H[d] as number, L[sr] as number, H[sr] as number);
          H[d] = wide[0] as number;
          pc++;
          continue;
        }
        case 11: { // or64Imm
          const d = (w >> 8) & 15;
          L[d] = (L[d] as number) | (IMM[pc] as number);
          H[d] = (H[d] as number) | ((IMM[pc] as number) >> 31);
          pc++;
          continue;
        }
        case 12: { // or64Reg
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          L[d] = (L[d] as number) | (L[sr] as number);
          H[d] = (H[d] as number) | (H[sr] as number);
          pc++;
          continue;
        }
        case 13: { // and64Imm
          const d = (w >> 8) & 15;
          L[d] = (L[d] as number) & (IMM[pc] as number);
          H[d] = (H[d] as number) & ((IMM[pc] as number) >> 31);
          pc++;
          continue;
        }
        case 14: { // and64Reg
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          L[d] = (L[d] as number) & (L[sr] as number);
          H[d] = (H[d] as number) & (H[sr] as number);
          pc++;
          continue;
        }
        case 20: { // xor64Imm
          const d = (w >> 8) & 15;
          L[d] = (L[d] as number) ^ (IMM[pc] as number);
          H[d] = (H[d] as number) ^ ((IMM[pc] as number) >> 31);
          pc++;
          continue;
        }
        case 21: { // xor64Reg
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          L[d] = (L[d] as number) ^ (L[sr] as number);
          H[d] = (H[d] as number) ^ (H[sr] as number);
          pc++;
          continue;
        }
        case 15: { // lsh64Imm
          const d = (w >> 8) & 15;
          const c = (IMM[pc] as number) & 63;
          if (c !== 0) {
            const lo = L[d] as number;
            if (c < 32) {
              H[d] = ((H[d] as number) << c) | (lo >>> (32 - c));
              L[d] = lo << c;
            } else {
              H[d] = lo << (c - 32);
              L[d] = 0;
            }
          }
          pc++;
          continue;
        }
        case 16: { // lsh64Reg
          const d = (w >> 8) & 15;
          const c = (L[(w >> 12) & 15] as number) & 63;
          if (c !== 0) {
            const lo = L[d] as number;
            if (c < 32) {
              H[d] = ((H[d] as number) << c) | (lo >>> (32 - c));
              L[d] = lo << c;
            } else {
              H[d] = lo << (c - 32);
              L[d] = 0;
            }
          }
          pc++;
          continue;
        }
        case 17: { // rsh64Imm
          const d = (w >> 8) & 15;
          const c = (IMM[pc] as number) & 63;
          if (c !== 0) {
            const hi = H[d] as number;
            if (c < 32) {
              L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
              H[d] = hi >>> c;
            } else {
              L[d] = hi >>> (c - 32);
              H[d] = 0;
            }
          }
          pc++;
          continue;
        }
        case 18: { // rsh64Reg
          const d = (w >> 8) & 15;
          const c = (L[(w >> 12) & 15] as number) & 63;
          if (c !== 0) {
            const hi = H[d] as number;
            if (c < 32) {
              L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
              H[d] = hi >>> c;
            } else {
              L[d] = hi >>> (c - 32);
              H[d] = 0;
            }
          }
          pc++;
          continue;
        }
        case 24: { // arsh64Imm
          const d = (w >> 8) & 15;
          const c = (IMM[pc] as number) & 63;
          if (c !== 0) {
            const hi = H[d] as number;
            if (c < 32) {
              L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
              H[d] = hi >> c;
            } else {
              L[d] = hi >> (c - 32);
              H[d] = hi >> 31;
            }
          }
          pc++;
          continue;
        }
        case 25: { // arsh64Reg
          const d = (w >> 8) & 15;
          const c = (L[(w >> 12) & 15] as number) & 63;
          if (c !== 0) {
            const hi = H[d] as number;
            if (c < 32) {
              L[d] = ((L[d] as number) >>> c) | (hi << (32 - c));
              H[d] = hi >> c;
            } else {
              L[d] = hi >> (c - 32);
              H[d] = hi >> 31;
            }
          }
          pc++;
          continue;
        }
        case 19: { // neg64
          const d = (w >> 8) & 15;
          const lo = L[d] as number;
          L[d] = -lo | 0;
          H[d] = (~(H[d] as number) + (lo === 0 ? 1 : 0)) | 0;
          pc++;
          continue;
        }
        case 22: { // mov64Imm
          const d = (w >> 8) & 15;
          L[d] = IMM[pc] as number;
          H[d] = (IMM[pc] as number) >> 31;
          pc++;
          continue;
        }
        case 23: { // mov64Reg
          const d = (w >> 8) & 15;
          const sr = (w >> 12) & 15;
          L[d] = L[sr] as number;
          H[d] = H[sr] as number;
          pc++;
          continue;
        }
        case 30: { // movsx8To64
          const d = (w >> 8) & 15;
          const v = ((L[(w >> 12) & 15] as number) << 24) >> 24;
          L[d] = v;
          H[d] = v >> 31;
          pc++;
          continue;
        }
        case 31: { // movsx16To64
          const d = (w >> 8) & 15;
          const v = ((L[(w >> 12) & 15] as number) << 16) >> 16;
          L[d] = v;
          H[d] = v >> 31;
          pc++;
          continue;
        }
        case 32: { // movsx32To64
          const d = (w >> 8) & 15;
          const v = L[(w >> 12) & 15] as number;
          L[d] = v;
          H[d] = v >> 31;
          pc++;
          continue;
        }
        case 33: { // loadImm64
          const d = (w >> 8) & 15;
          L[d] = IMM[pc] as number;
          H[d] = IMMHI[pc] as number;
          pc += 2;
          continue;
        }
        case 71: { // ldxw
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 4;
            break exec;
          }
          const d = (w >> 8) & 15;
          L[d] = (VIEWS[id] as DataView).getInt32(a, true);
          H[d] = 0;
          pc++;
          continue;
        }
        case 72: { // ldxh
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 2;
            break exec;
          }
          const d = (w >> 8) & 15;
          L[d] = (VIEWS[id] as DataView).getUint16(a, true);
          H[d] = 0;
          pc++;
          continue;
        }
        case 73: { // ldxb
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 1;
            break exec;
          }
          const d = (w >> 8) & 15;
          L[d] = (BYTES[id] as Uint8Array)[a] as number;
          H[d] = 0;
          pc++;
          continue;
        }
        case 74: { // ldxdw
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 8;
            break exec;
          }
          const d = (w >> 8) & 15;
          const view = VIEWS[id] as DataView;
          L[d] = view.getInt32(a, true);
          H[d] = view.getInt32(a + 4, true);
          pc++;
          continue;
        }
        case 75: { // ldxsw
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 4;
            break exec;
          }
          const d = (w >> 8) & 15;
          const v = (VIEWS[id] as DataView).getInt32(a, true);
          L[d] = v;
          H[d] = v >> 31;
          pc++;
          continue;
        }
        case 76: { // ldxsh
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 2;
            break exec;
          }
          const d = (w >> 8) & 15;
          const v = (VIEWS[id] as DataView).getInt16(a, true);
          L[d] = v;
          H[d] = v >> 31;
          pc++;
          continue;
        }
        case 77: { // ldxsb
          const s = (w >> 12) & 15;
          const id = H[s] as number;
          const a = ((L[s] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
            this.faultBase = s;
            this.faultSize = 1;
            break exec;
          }
          const d = (w >> 8) & 15;
          const v = (((BYTES[id] as Uint8Array)[a] as number) << 24) >> 24;
          L[d] = v;
          H[d] = v >> 31;
          pc++;
          continue;
        }
        case 78: { // stw
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 4;
            break exec;
          }
          (VIEWS[id] as DataView).setInt32(a, IMM[pc] as number, true);
          pc++;
          continue;
        }
        case 79: { // sth
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 2;
            break exec;
          }
          (VIEWS[id] as DataView).setInt16(a, IMM[pc] as number, true);
          pc++;
          continue;
        }
        case 80: { // stb
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 1;
            break exec;
          }
          (BYTES[id] as Uint8Array)[a] = IMM[pc] as number;
          pc++;
          continue;
        }
        case 82: { // stxw
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 4;
            break exec;
          }
          (VIEWS[id] as DataView).setInt32(a, L[(w >> 12) & 15] as number, true);
          pc++;
          continue;
        }
        case 83: { // stxh
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 2 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 2;
            break exec;
          }
          (VIEWS[id] as DataView).setInt16(a, L[(w >> 12) & 15] as number, true);
          pc++;
          continue;
        }
        case 84: { // stxb
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a >= (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 1;
            break exec;
          }
          (BYTES[id] as Uint8Array)[a] = L[(w >> 12) & 15] as number;
          pc++;
          continue;
        }
        case 81: { // stdw
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 8;
            break exec;
          }
          const view = VIEWS[id] as DataView;
          view.setInt32(a, IMM[pc] as number, true);
          view.setInt32(a + 4, (IMM[pc] as number) >> 31, true);
          pc++;
          continue;
        }
        case 85: { // stxdw
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 8;
            break exec;
          }
          const view = VIEWS[id] as DataView;
          const sr = (w >> 12) & 15;
          view.setInt32(a, L[sr] as number, true);
          view.setInt32(a + 4, H[sr] as number, true);
          pc++;
          continue;
        }
        case 145: { // gotol (JMP32 ja: offset in imm)
          pc = pc + 1 + (IMM[pc] as number);
          if (n > budget) {
            status = RunStatus.budgetExhausted;
            break exec;
          }
          continue;
        }
        case 88: { // ja
          pc = pc + 1 + (w >> 16);
          if (n > budget) {
            status = RunStatus.budgetExhausted;
            break exec;
          }
          continue;
        }
        case 89: { // jeqImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (al === bl && ah === bh) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 111: { // jeq32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a === b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 90: { // jeqReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (al === bl && ah === bh) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 112: { // jeq32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a === b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 91: { // jgtImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 > bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 113: { // jgt32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a >>> 0 > b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 92: { // jgtReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 > bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 114: { // jgt32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a >>> 0 > b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 93: { // jgeImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 >= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 115: { // jge32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a >>> 0 >= b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 94: { // jgeReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah >>> 0 > bh >>> 0 : al >>> 0 >= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 116: { // jge32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a >>> 0 >= b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 95: { // jsetImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if ((al & bl) !== 0 || (ah & bh) !== 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 117: { // jset32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if ((a & b) !== 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 96: { // jsetReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if ((al & bl) !== 0 || (ah & bh) !== 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 118: { // jset32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if ((a & b) !== 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 97: { // jneImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (al !== bl || ah !== bh) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 119: { // jne32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a !== b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 98: { // jneReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (al !== bl || ah !== bh) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 120: { // jne32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a !== b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 99: { // jsgtImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah > bh : al >>> 0 > bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 121: { // jsgt32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a > b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 100: { // jsgtReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah > bh : al >>> 0 > bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 122: { // jsgt32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a > b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 101: { // jsgeImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah > bh : al >>> 0 >= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 123: { // jsge32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a >= b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 102: { // jsgeReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah > bh : al >>> 0 >= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 124: { // jsge32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a >= b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 103: { // jltImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 < bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 125: { // jlt32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a >>> 0 < b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 104: { // jltReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 < bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 126: { // jlt32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a >>> 0 < b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 105: { // jleImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 <= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 127: { // jle32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a >>> 0 <= b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 106: { // jleReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah >>> 0 < bh >>> 0 : al >>> 0 <= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 128: { // jle32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a >>> 0 <= b >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 107: { // jsltImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah < bh : al >>> 0 < bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 129: { // jslt32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a < b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 108: { // jsltReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah < bh : al >>> 0 < bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 130: { // jslt32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a < b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 109: { // jsleImm
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const bl = IMM[pc] as number;
          const bh = (IMM[pc] as number) >> 31;
          if (ah !== bh ? ah < bh : al >>> 0 <= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 131: { // jsle32Imm
          const a = L[(w >> 8) & 15] as number;
          const b = IMM[pc] as number;
          if (a <= b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 110: { // jsleReg
          const d = (w >> 8) & 15;
          const al = L[d] as number;
          const ah = H[d] as number;
          const sr = (w >> 12) & 15;
          const bl = L[sr] as number;
          const bh = H[sr] as number;
          if (ah !== bh ? ah < bh : al >>> 0 <= bl >>> 0) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 132: { // jsle32Reg
          const a = L[(w >> 8) & 15] as number;
          const b = L[(w >> 12) & 15] as number;
          if (a <= b) {
            pc = pc + 1 + (w >> 16);
            if (n > budget) {
              status = RunStatus.budgetExhausted;
              break exec;
            }
          } else pc++;
          continue;
        }
        case 34: { // add32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = ((L[d] as number) + b) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 35: { // add32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = ((L[d] as number) + b) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 36: { // sub32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = ((L[d] as number) - b) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 37: { // sub32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = ((L[d] as number) - b) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 38: { // mul32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = Math.imul(L[d] as number, b);
          H[d] = 0;
          pc++;
          continue;
        }
        case 39: { // mul32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = Math.imul(L[d] as number, b);
          H[d] = 0;
          pc++;
          continue;
        }
        case 40: { // div32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = b === 0 ? 0 : Math.floor(((L[d] as number) >>> 0) / (b >>> 0)) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 41: { // div32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = b === 0 ? 0 : Math.floor(((L[d] as number) >>> 0) / (b >>> 0)) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 44: { // or32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = (L[d] as number) | b;
          H[d] = 0;
          pc++;
          continue;
        }
        case 45: { // or32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = (L[d] as number) | b;
          H[d] = 0;
          pc++;
          continue;
        }
        case 46: { // and32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = (L[d] as number) & b;
          H[d] = 0;
          pc++;
          continue;
        }
        case 47: { // and32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = (L[d] as number) & b;
          H[d] = 0;
          pc++;
          continue;
        }
        case 48: { // lsh32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = (L[d] as number) << (b & 31);
          H[d] = 0;
          pc++;
          continue;
        }
        case 49: { // lsh32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = (L[d] as number) << (b & 31);
          H[d] = 0;
          pc++;
          continue;
        }
        case 50: { // rsh32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = (L[d] as number) >>> (b & 31);
          H[d] = 0;
          pc++;
          continue;
        }
        case 51: { // rsh32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = (L[d] as number) >>> (b & 31);
          H[d] = 0;
          pc++;
          continue;
        }
        case 53: { // xor32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = (L[d] as number) ^ b;
          H[d] = 0;
          pc++;
          continue;
        }
        case 54: { // xor32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = (L[d] as number) ^ b;
          H[d] = 0;
          pc++;
          continue;
        }
        case 57: { // arsh32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = (L[d] as number) >> (b & 31);
          H[d] = 0;
          pc++;
          continue;
        }
        case 58: { // arsh32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = (L[d] as number) >> (b & 31);
          H[d] = 0;
          pc++;
          continue;
        }
        case 59: { // sdiv32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          L[d] = b === 0 ? 0 : ((L[d] as number) / b) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 60: { // sdiv32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          L[d] = b === 0 ? 0 : ((L[d] as number) / b) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 42: { // mod32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          if (b !== 0) L[d] = ((L[d] as number) >>> 0) % (b >>> 0) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 43: { // mod32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          if (b !== 0) L[d] = ((L[d] as number) >>> 0) % (b >>> 0) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 61: { // smod32Imm
          const d = (w >> 8) & 15;
          const b = IMM[pc] as number;
          if (b !== 0) L[d] = (L[d] as number) % b | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 62: { // smod32Reg
          const d = (w >> 8) & 15;
          const b = L[(w >> 12) & 15] as number;
          if (b !== 0) L[d] = (L[d] as number) % b | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 52: { // neg32
          const d = (w >> 8) & 15;
          L[d] = -(L[d] as number) | 0;
          H[d] = 0;
          pc++;
          continue;
        }
        case 55: { // mov32Imm
          const d = (w >> 8) & 15;
          L[d] = IMM[pc] as number;
          H[d] = 0;
          pc++;
          continue;
        }
        case 56: { // mov32Reg
          const d = (w >> 8) & 15;
          L[d] = L[(w >> 12) & 15] as number;
          H[d] = 0;
          pc++;
          continue;
        }
        case 63: { // movsx8To32
          const d = (w >> 8) & 15;
          L[d] = ((L[(w >> 12) & 15] as number) << 24) >> 24;
          H[d] = 0;
          pc++;
          continue;
        }
        case 64: { // movsx16To32
          const d = (w >> 8) & 15;
          L[d] = ((L[(w >> 12) & 15] as number) << 16) >> 16;
          H[d] = 0;
          pc++;
          continue;
        }
        case 65: { // le16
          const d = (w >> 8) & 15;
          L[d] = (L[d] as number) & 0xffff;
          H[d] = 0;
          pc++;
          continue;
        }
        case 66: { // le32
          H[(w >> 8) & 15] = 0;
          pc++;
          continue;
        }
        case 67: { // le64
          pc++;
          continue;
        }
        case 68: { // swap16 (be16, bswap16)
          const d = (w >> 8) & 15;
          const x = L[d] as number;
          L[d] = ((x & 0xff) << 8) | ((x >>> 8) & 0xff);
          H[d] = 0;
          pc++;
          continue;
        }
        case 69: { // swap32 (be32, bswap32)
          const d = (w >> 8) & 15;
          L[d] = bswap32(L[d] as number);
          H[d] = 0;
          pc++;
          continue;
        }
        case 70: { // swap64 (be64, bswap64)
          const d = (w >> 8) & 15;
          const lo = L[d] as number;
          L[d] = bswap32(H[d] as number);
          H[d] = bswap32(lo);
          pc++;
          continue;
        }
        case 86: { // atomic32
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 4 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 4;
            break exec;
          }
          const view = VIEWS[id] as DataView;
          const sr = (w >> 12) & 15;
          const k = IMM[pc] as number;
          const old = view.getInt32(a, true);
          const v = L[sr] as number;
          switch (k & 0xf0) {
            case 0x00:
              view.setInt32(a, (old + v) | 0, true);
              break;
            case 0x40:
              view.setInt32(a, old | v, true);
              break;
            case 0x50:
              view.setInt32(a, old & v, true);
              break;
            case 0xa0:
              view.setInt32(a, old ^ v, true);
              break;
            case 0xe0:
              view.setInt32(a, v, true);
              break;
            default: // 0xf0 cmpxchg: compare with w0, r0 = old
              if (old === L[0]) view.setInt32(a, v, true);
              L[0] = old;
              H[0] = 0;
              pc++;
              continue;
          }
          if ((k & 1) !== 0) {
            L[sr] = old;
            H[sr] = 0;
          }
          pc++;
          continue;
        }
        case 87: { // atomic64
          const b = (w >> 8) & 15;
          const id = H[b] as number;
          const a = ((L[b] as number) >>> 0) + (w >> 16);
          if (id <= 0 || id >= NR || a < (LOW[id] as number) || a + 8 > (LEN[id] as number)) {
            this.faultBase = b;
            this.faultSize = 8;
            break exec;
          }
          const view = VIEWS[id] as DataView;
          const sr = (w >> 12) & 15;
          const k = IMM[pc] as number;
          const oldLo = view.getInt32(a, true);
          const oldHi = view.getInt32(a + 4, true);
          const vl = L[sr] as number;
          const vh = H[sr] as number;
          let nl = vl;
          let nh = vh;
          switch (k & 0xf0) {
            case 0x00: {
              const s = (oldLo >>> 0) + (vl >>> 0);
              nl = s | 0;
              nh = (oldHi + vh + (s > 0xffffffff ? 1 : 0)) | 0;
              break;
            }
            case 0x40:
              nl = oldLo | vl;
              nh = oldHi | vh;
              break;
            case 0x50:
              nl = oldLo & vl;
              nh = oldHi & vh;
              break;
            case 0xa0:
              nl = oldLo ^ vl;
              nh = oldHi ^ vh;
              break;
            case 0xe0:
              break;
            default: // cmpxchg
              if (oldLo === L[0] && oldHi === H[0]) {
                view.setInt32(a, vl, true);
                view.setInt32(a + 4, vh, true);
              }
              L[0] = oldLo;
              H[0] = oldHi;
              pc++;
              continue;
          }
          view.setInt32(a, nl, true);
          view.setInt32(a + 4, nh, true);
          if ((k & 1) !== 0) {
            L[sr] = oldLo;
            H[sr] = oldHi;
          }
          pc++;
          continue;
        }

        case 136: { // exit
          if (frame === 0) break exec;
          frame--;
          const saved = this.frameSaved;
          const base = frame * 9;
          L[6] = saved[base] as number;
          H[6] = saved[base + 1] as number;
          L[7] = saved[base + 2] as number;
          H[7] = saved[base + 3] as number;
          L[8] = saved[base + 4] as number;
          H[8] = saved[base + 5] as number;
          L[9] = saved[base + 6] as number;
          H[9] = saved[base + 7] as number;
          L[10] = saved[base + 8] as number;
          H[10] = STACK_REGION;
          LOW[STACK_REGION] = (L[10] as number) - STACK_FRAME_SIZE;
          pc = this.frameReturn[frame] as number;
          if (pc < 0) {
            // a bpf_loop callback returned: the loop's next step, out of the hot loop
            w = 146;
            slow = true;
            break exec;
          }
          continue;
        }
        case 7:
        case 8:
        case 9:
        case 10:
        case 26:
        case 27:
        case 28:
        case 29:
        case 133:
        case 134:
        case 135:
          // calls (helpers kill what V8 knows of the arrays) and 64-bit division: out of the hot loop
          slow = true;
          break exec;
        default:
          this.faultMsg = `invalid opcode 0x${(prog.op[pc] as number).toString(16)}`;
          break exec;
      }
    }
    if (!slow) break;
    slow = false;
    switch (w & 0xff) {
      case 7: { // div64Imm
        const d = (w >> 8) & 15;
        const vl = IMM[pc] as number;
        const vh = (IMM[pc] as number) >> 31;
        if (vl === 0 && vh === 0) {
          L[d] = 0;
          H[d] = 0;
        } else {
          L[d] = udivmod64(L[d] as number, H[d] as number, vl, vh);
          H[d] = wide[0] as number;
        }
        pc++;
        continue run;
      }
      case 8: { // div64Reg
        const d = (w >> 8) & 15;
        const vl = L[(w >> 12) & 15] as number;
        const vh = H[(w >> 12) & 15] as number;
        if (vl === 0 && vh === 0) {
          L[d] = 0;
          H[d] = 0;
        } else {
          L[d] = udivmod64(L[d] as number, H[d] as number, vl, vh);
          H[d] = wide[0] as number;
        }
        pc++;
        continue run;
      }
      case 9: { // mod64Imm
        const d = (w >> 8) & 15;
        const vl = IMM[pc] as number;
        const vh = (IMM[pc] as number) >> 31;
        if (vl !== 0 || vh !== 0) {
          udivmod64(L[d] as number, H[d] as number, vl, vh);
          L[d] = wide[1] as number;
          H[d] = wide[2] as number;
        }
        pc++;
        continue run;
      }
      case 10: { // mod64Reg
        const d = (w >> 8) & 15;
        const vl = L[(w >> 12) & 15] as number;
        const vh = H[(w >> 12) & 15] as number;
        if (vl !== 0 || vh !== 0) {
          udivmod64(L[d] as number, H[d] as number, vl, vh);
          L[d] = wide[1] as number;
          H[d] = wide[2] as number;
        }
        pc++;
        continue run;
      }
      case 26: { // sdiv64Imm
        const d = (w >> 8) & 15;
        const vl = IMM[pc] as number;
        const vh = (IMM[pc] as number) >> 31;
        if (vl === 0 && vh === 0) {
          L[d] = 0;
          H[d] = 0;
        } else {
          L[d] = sdivmod64(L[d] as number, H[d] as number, vl, vh);
          H[d] = wide[0] as number;
        }
        pc++;
        continue run;
      }
      case 27: { // sdiv64Reg
        const d = (w >> 8) & 15;
        const vl = L[(w >> 12) & 15] as number;
        const vh = H[(w >> 12) & 15] as number;
        if (vl === 0 && vh === 0) {
          L[d] = 0;
          H[d] = 0;
        } else {
          L[d] = sdivmod64(L[d] as number, H[d] as number, vl, vh);
          H[d] = wide[0] as number;
        }
        pc++;
        continue run;
      }
      case 28: { // smod64Imm
        const d = (w >> 8) & 15;
        const vl = IMM[pc] as number;
        const vh = (IMM[pc] as number) >> 31;
        if (vl !== 0 || vh !== 0) {
          sdivmod64(L[d] as number, H[d] as number, vl, vh);
          L[d] = wide[1] as number;
          H[d] = wide[2] as number;
        }
        pc++;
        continue run;
      }
      case 29: { // smod64Reg
        const d = (w >> 8) & 15;
        const vl = L[(w >> 12) & 15] as number;
        const vh = H[(w >> 12) & 15] as number;
        if (vl !== 0 || vh !== 0) {
          sdivmod64(L[d] as number, H[d] as number, vl, vh);
          L[d] = wide[1] as number;
          H[d] = wide[2] as number;
        }
        pc++;
        continue run;
      }
      case 133: // callHelper
      case 134: { // callReg
        const id = ((w & 0xff) === 133 ? IMM[pc] : L[(w >> 12) & 15]) as number;
        if (id === HelperId.loop && HELPERS[id] !== undefined) {
          // bpf_loop(nr_loops (u32), callback, callback_ctx, flags): as the kernel, -EINVAL for
          // flags, -E2BIG above 8M iterations; else the callback runs as a BPF-to-BPF call per
          // iteration (r1 = index, r2 = callback_ctx) until it returns non-zero
          const nr = (L[1] as number) >>> 0;
          if (H[2] !== FUNC_REGION || !isCallbackEntry(prog, L[2] as number)) {
            this.faultMsg = 'bpf_loop: r2 is not a callback address';
            break run;
          }
          if (L[4] !== 0 || H[4] !== 0 || nr === 0 || nr > 8 * 1024 * 1024) {
            L[0] = L[4] !== 0 || H[4] !== 0 ? -Errno.EINVAL : nr === 0 ? 0 : -Errno.E2BIG;
            H[0] = L[0] === 0 ? 0 : -1;
            pc++;
            continue run;
          }
          if (frame + 1 >= MAX_FRAMES) {
            this.faultMsg = `call stack deeper than ${MAX_FRAMES} frames`;
            break run;
          }
          const loop = this.frameLoop;
          const at = frame * 6;
          loop[at] = nr;
          loop[at + 2] = L[2] as number;
          loop[at + 3] = L[3] as number;
          loop[at + 4] = H[3] as number;
          loop[at + 5] = pc;
          pc = this.enterLoopCallback(frame, 0);
          frame++;
          if (n > budget) {
            status = RunStatus.budgetExhausted;
            break run;
          }
          continue run;
        }
        const fn = id >= 0 ? HELPERS[id] : undefined;
        if (fn === undefined) {
          this.faultMsg = `call to unknown helper ${id}`;
          break run;
        }
        this.lastPc = pc;
        this.lastProgram = prog;
        this.frame = frame;
        const action = fn(this);
        if (action !== HelperAction.next) {
          if (action === HelperAction.exit) break run;
          if (action === HelperAction.fault) {
            this.faultMsg = 'helper';
            break run;
          }
          // tail call: continue in the target program (frame 0, r1 = ctx, same stack)
          if (n > budget) {
            status = RunStatus.budgetExhausted;
            break run;
          }
          status = TAIL_CALL;
          break run;
        }
        pc++;
        if (n > budget) {
            status = RunStatus.budgetExhausted;
            break run;
          }
        continue run;
      }
      case 135: { // callLocal
        if (frame + 1 >= MAX_FRAMES) {
          this.faultMsg = `call stack deeper than ${MAX_FRAMES} frames`;
          break run;
        }
        this.pushFrame(frame, pc + 1);
        frame++;
        pc = pc + 1 + (IMM[pc] as number);
        if (n > budget) {
            status = RunStatus.budgetExhausted;
            break run;
          }
        continue run;
      }
      case 146: { // loopNext: a bpf_loop callback of this frame returned (r0: 0 = go on)
        const loop = this.frameLoop;
        const at = frame * 6;
        const i = (loop[at + 1] as number) + 1;
        const nr = loop[at] as number;
        if (L[0] !== 0 || H[0] !== 0 || i >>> 0 >= nr >>> 0) {
          // the number of iterations made: i + 1 after a stop (i counts the finished one)
          L[0] = i;
          H[0] = 0;
          pc = (loop[at + 5] as number) + 1;
          if (n > budget) {
            status = RunStatus.budgetExhausted;
            break run;
          }
          continue run;
        }
        pc = this.enterLoopCallback(frame, i);
        frame++;
        if (n > budget) {
          status = RunStatus.budgetExhausted;
          break run;
        }
        continue run;
      }
      default:
        break run;
    }
  }

  return this.conclude(prog, pc, n, frame, status);
}

/**
 * Enters iteration `index` of the bpf_loop that `frame` runs: its callback in the next frame
 * (returning into the loop), r1 = the index, r2 = the loop's context, r3-r5 = 0. Returns the
 * callback's pc.
 */
export function enterLoopCallback(this: InterpreterHost, frame: number, index: number): number {
  const loop = this.frameLoop;
  const at = frame * 6;
  const L = this.regLo;
  const H = this.regHi;
  loop[at + 1] = index;
  this.pushFrame(frame, -1);
  L[1] = index;
  H[1] = 0;
  L[2] = loop[at + 3] as number;
  H[2] = loop[at + 4] as number;
  L[3] = L[4] = L[5] = 0;
  H[3] = H[4] = H[5] = 0;
  return loop[at + 2] as number;
}

/**
 * Saves the callee-saved registers (r6-r9) and r10 of `frame`, records where the frame returns
 * to (-1: into the bpf_loop it runs), and gives the next frame its zeroed 512 bytes and r10.
 */
export function pushFrame(this: InterpreterHost, frame: number, returnPc: number): void {
  const L = this.regLo;
  const H = this.regHi;
  const saved = this.frameSaved;
  const base = frame * 9;
  saved[base] = L[6] as number;
  saved[base + 1] = H[6] as number;
  saved[base + 2] = L[7] as number;
  saved[base + 3] = H[7] as number;
  saved[base + 4] = L[8] as number;
  saved[base + 5] = H[8] as number;
  saved[base + 6] = L[9] as number;
  saved[base + 7] = H[9] as number;
  saved[base + 8] = L[10] as number;
  this.frameReturn[frame] = returnPc;
  const top = STACK_TOP - (frame + 1) * STACK_FRAME_SIZE;
  (this.regionBytes[STACK_REGION] as Uint8Array).fill(0, top - STACK_FRAME_SIZE, top);
  this.regionLow[STACK_REGION] = top - STACK_FRAME_SIZE;
  L[10] = top;
  H[10] = STACK_REGION;
}

function bswap32(x: number): number {
  return ((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | ((x >>> 24) & 0xff);
}

/** The interpreter's methods, installed on `Vm`'s prototype (vm.ts). */
export const interpreterMethods = { interpret, enterLoopCallback, pushFrame };
