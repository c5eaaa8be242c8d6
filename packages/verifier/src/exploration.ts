// What the driver loop (verifier.ts) works on: paths waiting to be explored, the checkpoints
// stored at prune points, and the two signals thrown out of a run (a rejection, a restart).

import type { State } from './state.js';

/** A rejection raised deep in the interpreter; becomes the one diagnostic of the result. */
export class Reject {
  constructor(
    readonly insnIndex: number,
    readonly message: string,
  ) {}
}

export interface Checkpoint {
  state: State;
  insnIndex: number;
  /** Paths still being explored below this state (0 = fully explored). */
  branches: number;
  parent: Checkpoint | null;
  /** Hash for exact comparison (infinite-loop detection). */
  key: number | null;
  /** The next in-progress state at this instruction with the same key (`byKey`'s chains). */
  nextSame: Checkpoint | null;
}

export interface Path {
  state: State;
  insnIndex: number;
  checkpoint: Checkpoint | null;
}

/**
 * Thrown out of a run when a conditional jump is found decided (one way only) for the first
 * time after a prune relied on precision: that prune may have merged states the new decision
 * tells apart, so the run starts again with the branch's operands precise.
 */
export class Restart {}
