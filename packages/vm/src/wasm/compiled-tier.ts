import { MAX_FRAMES } from '../address.js';
import { callbackEntries, mayCallLoop } from '../callbacks.js';
import { HelperAction, type HelperFn, type HelperHost } from '../helpers/helper-fn.js';
import { mapLookupElem } from '../helpers/helpers.js';
import { HelperId } from '../helper-ids.js';
import type { InlineLookup } from '../maps/map.js';
import { AbortKind, MAX_COMPILED_BUDGET, MAX_REGIONS, StartFlags, State } from '../memory/layout.js';
import { VmMemory } from '../memory/vm-memory.js';
import { hasWebAssembly } from '../memory/wasm-api.js';
import type { LoadedProgram } from '../program.js';
import { RunStatus, TAIL_CALL } from '../run-status.js';
import { PageStage, STAGE_BYTES } from './page-stage.js';
import { type CompiledEntry, compiledModule, instantiate } from './wasm-tier.js';

/** What the VM's tier choice did so far (the runtime shows these). */
export interface TierCounters {
  /** Programs that run compiled, and programs that fell back to the interpreter. */
  compiledPrograms: number;
  fallbackPrograms: number;
  /** Compile time of the programs this VM compiled (cache hits add nothing), ns. */
  compileNs: number;
  /** Instructions of the programs this VM compiled. */
  compiledInstructions: number;
  /** Runs (and tail-called programs) executed by each tier. */
  compiledRuns: number;
  interpretedRuns: number;
  /** Of the compiled runs, those that took the short path (one of the last two programs run compiled to a normal exit). */
  fastRuns: number;
  /** Why the last program fell back to the interpreter. */
  lastFallbackReason: string | undefined;
}

/**
 * What the compiled tier's glue uses of the VM built on it (`Vm` implements it): the VM as its
 * helpers see it (the compiled code's helper import calls them with it), the helper table, and
 * the interpreter, which runs a program the compiled tier does not take.
 */
export interface CompiledTierHost extends HelperHost {
  readonly helperTable: (HelperFn | undefined)[];
  interpret(prog: LoadedProgram, startCount: number): number;
}

/**
 * The compiled tier's glue over the memory model: whether this VM can run compiled code
 * (`startCompiledTier`), each program's compiled entry (`entryOf`: the module of its bytes from
 * the cache of wasm-tier.ts, instantiated once per VM over its linear memory, with the helper
 * import), one program of a run on its tier (`runOne`, the interpreter for a program without an
 * entry), the stage of records read in place (page-stage.ts) and the tier counters. `Vm`
 * (vm.ts) extends it; its methods that need the VM above take it as `this: CompiledTierHost`.
 */
export abstract class CompiledTier extends VmMemory {
  readonly tierCounters: TierCounters = {
    compiledPrograms: 0,
    fallbackPrograms: 0,
    compileNs: 0,
    compiledInstructions: 0,
    compiledRuns: 0,
    interpretedRuns: 0,
    fastRuns: 0,
    lastFallbackReason: undefined,
  };
  /** Pages of the trace feed staged in linear memory (compiled tier; see stageRecords). */
  protected stage: PageStage | undefined;
  private readonly entries = new WeakMap<LoadedProgram, CompiledEntry | null>();
  private unknownHelperId = 0;
  /** The last program run compiled and its entry (skips the WeakMap on the per-event path). */
  protected hotProgram: LoadedProgram | undefined;
  protected hotEntry: CompiledEntry | undefined;
  /**
   * The last program `run` was called with and whether it can write the stack (vm.ts sets them:
   * its frame-0 zeroing; read here to fill the fast slots).
   */
  protected zeroProgram: LoadedProgram | undefined;
  protected zeroSees = true;
  /**
   * The last two programs that ran fresh on the compiled tier to a normal exit, with their entry
   * and whether they can write the stack: their runs take `Vm.runFast` (two, so that a spec
   * whose programs alternate on one VM — runqlat's wakeup and switch — takes it too).
   */
  protected fast0: LoadedProgram | undefined;
  protected fastEntry0: CompiledEntry | undefined;
  protected fastSees0 = true;
  protected fast1: LoadedProgram | undefined;
  protected fastEntry1: CompiledEntry | undefined;
  protected fastSees1 = true;
  /**
   * The program whose fresh compiled run last exited normally, when nothing ran since: the
   * register file then holds the start values of every register it cannot write
   * (compile-wasm.ts, writtenRegisters), so its next `start` stores only the others.
   */
  protected fileProgram: LoadedProgram | undefined;

  /**
   * Creates the linear memory (the memory model's {@link createMemory}) when compiled code can
   * run in this VM; otherwise records why not in {@link tierCounters} (every program then
   * falls back to the interpreter).
   */
  protected startCompiledTier(): void {
    const regionCount = 3 + this.maps.length;
    const why = !hasWebAssembly
      ? 'WebAssembly is not available'
      : regionCount > MAX_REGIONS
        ? `${this.maps.length} maps: more regions than the compiled tier's ${MAX_REGIONS}`
        : this.budget > MAX_COMPILED_BUDGET
          ? `budget ${this.budget} is above the compiled tier's ${MAX_COMPILED_BUDGET}`
          : undefined;
    const failed = why ?? this.createMemory(STAGE_BYTES);
    if (failed !== undefined) this.tierCounters.lastFallbackReason = failed;
  }

  /** Binds the views of the memory model, then the stage's (after creating or growing memory). */
  protected override bindViews(): void {
    super.bindViews();
    const buf = this.memoryBytes.buffer;
    if (this.stage) this.stage.bind(buf);
    else this.stage = new PageStage(this.stageAddr, buf);
  }

  /**
   * The compiled entry of `program` in this VM, or undefined when it runs on the interpreter:
   * compiles it on first use (or takes the cached module of the same bytes), instantiates it over
   * this VM's memory with the helper import, and counts the choice in {@link tierCounters}.
   */
  protected entryOf(this: CompiledTier & CompiledTierHost, program: LoadedProgram): CompiledEntry | undefined {
    const known = this.entries.get(program);
    if (known !== undefined) return known ?? undefined;
    let entry: CompiledEntry | null = null;
    const c = this.tierCounters;
    if (this.helperTable[HelperId.loop] === undefined && callbackEntries(program).length > 0 && mayCallLoop(program)) {
      // compiled code runs bpf_loop inline; without the helper it must be an unknown id instead
      c.lastFallbackReason = 'bpf_loop: not a helper of this VM';
    } else if (this.memory) {
      const r = compiledModule(program, this.inlineLookups(program));
      if (r.ok) {
        try {
          const memory = this.memory;
          entry = instantiate(r.compiled, memory, (id, pc, frame) => {
            this.lastPc = pc;
            this.lastProgram = program;
            this.frame = frame;
            const fn = id >= 0 ? this.helperTable[id] : undefined;
            // the standard map lookup (most tracing programs' one helper per run) called directly
            if (fn === mapLookupElem && id !== HelperId.loop) return mapLookupElem(this);
            if (fn === undefined) {
              this.unknownHelperId = id;
              return 4;
            }
            // bpf_loop in a program without callbacks (else compiled inline): the interpreter's fault
            if (id === HelperId.loop) return 5;
            return fn(this);
          });
          if (!r.cached) {
            c.compileNs += r.compiled.compileNs;
            c.compiledInstructions += r.compiled.instructions;
          }
        } catch (e) {
          c.lastFallbackReason = `instantiate: ${(e as Error).message}`;
        }
      } else c.lastFallbackReason = r.reason;
    }
    if (entry) c.compiledPrograms++;
    else c.fallbackPrograms++;
    this.entries.set(program, entry);
    return entry ?? undefined;
  }

  /**
   * By map index, the maps `program` names whose `bpf_map_lookup_elem` its compiled code may do
   * without calling into JavaScript: none when this VM's lookup helper is not the standard one.
   */
  private inlineLookups(this: CompiledTier & CompiledTierHost, program: LoadedProgram): (InlineLookup | undefined)[] {
    const out: (InlineLookup | undefined)[] = [];
    if (this.helperTable[HelperId.mapLookupElem] !== mapLookupElem) return out;
    for (const k of program.maps) out[k] = this.maps[k]?.inlineLookup;
    return out;
  }

  /**
   * One program (of a run and its tail calls) on its tier, from pc 0 with `n` instructions
   * counted; `fresh` >= 0 (the context's length) when `prog` is the hot compiled program starting
   * a run with its registers not written to the register file.
   */
  protected runOne(this: CompiledTier & CompiledTierHost, prog: LoadedProgram, n: number, fresh: number, staged: number): number {
    const entry = prog === this.hotProgram ? this.hotEntry : this.memory ? this.entryOf(prog) : undefined;
    if (entry === undefined) {
      this.tierCounters.interpretedRuns++;
      return this.interpret(prog, n);
    }
    this.tierCounters.compiledRuns++;
    this.hotProgram = prog;
    this.hotEntry = entry;
    const S = this.runState;
    if ((fresh >= 0 ? entry.start(n, fresh, staged, StartFlags.full) : entry.run(n)) === 0) {
      // exit from frame 0: what conclude does for a run without a fault
      this.insnCount = S[State.n / 4] as number;
      this.lastPc = S[State.pc / 4] as number;
      this.lastProgram = prog;
      this.frame = 0;
      if (fresh >= 0) {
        this.fileProgram = prog;
        if (prog !== this.fast0 && prog === this.zeroProgram) {
          // the newest first (a program in slot 1 swaps places with slot 0)
          this.fast1 = this.fast0;
          this.fastEntry1 = this.fastEntry0;
          this.fastSees1 = this.fastSees0;
          this.fast0 = prog;
          this.fastEntry0 = entry;
          this.fastSees0 = this.zeroSees;
        }
      }
      return RunStatus.ok;
    }
    return this.stopped(prog);
  }

  /** After compiled code returned 1: the fault, the budget, a helper's exit or a tail call. */
  protected stopped(prog: LoadedProgram): number {
    const S = this.runState;
    this.faultBase = -1;
    this.faultSize = 0;
    this.faultMsg = '';
    const pc = S[State.pc / 4] as number;
    const count = S[State.n / 4] as number;
    const frame = S[State.frame / 4] as number;
    const kind = S[State.kind / 4] as number;
    let status: number = RunStatus.ok;
    if (kind === AbortKind.memory) {
      this.faultBase = S[State.faultBase / 4] as number;
      this.faultSize = S[State.faultSize / 4] as number;
    } else if (kind === AbortKind.budget) status = RunStatus.budgetExhausted;
    else if (kind === AbortKind.callDepth) this.faultMsg = `call stack deeper than ${MAX_FRAMES} frames`;
    else if (kind === AbortKind.loopCallback || kind === AbortKind.helper + 5) this.faultMsg = 'bpf_loop: r2 is not a callback address';
    else if (kind === AbortKind.helper + HelperAction.fault) this.faultMsg = 'helper';
    else if (kind === AbortKind.helper + HelperAction.tailCall) status = count > this.budget ? RunStatus.budgetExhausted : TAIL_CALL;
    else if (kind === AbortKind.helper + 4) this.faultMsg = `call to unknown helper ${this.unknownHelperId}`;
    else if (kind !== AbortKind.helper + HelperAction.exit) this.faultMsg = `compiled code stopped with kind ${kind}`;
    return this.conclude(prog, pc, count, frame, status);
  }

  /**
   * Turns reading records in place on or off (compiled tier only; a no-op otherwise). While on,
   * `run(program, page, offset, length)` stages the page around the record in the VM's memory
   * once and copies each record of it into the context inside the compiled code, so the caller
   * promises that the bytes of every buffer it passes stay unchanged until the next call (the
   * trace feed's batches: valid until the next one). Every call drops what was staged.
   */
  stageRecords(on: boolean): void {
    const stage = this.stage;
    if (stage === undefined) return;
    stage.on = on;
    stage.clear();
  }

  /** Page windows staged so far (see {@link stageRecords}). */
  get stagedWindows(): number {
    return this.stage?.staged ?? 0;
  }
}
