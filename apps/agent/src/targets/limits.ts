// Limits that keep a program from hurting its node, measured over sliding windows of a target's
// cumulative counters: CPU time (throttled, then stopped with `cpu-budget`) and faults (stopped
// with the fault past N a minute). Memory is counted at load (see the target manager).

/** How much a cumulative counter grew over the trailing window. */
export class WindowedCounter {
  private times: number[] = [];
  private values: number[] = [];
  constructor(readonly windowMs: number) {}

  /** Records the counter's value `value` at time `nowMs`. */
  add(nowMs: number, value: number): void {
    this.times.push(nowMs);
    this.values.push(value);
    // keep one sample at or before the window's start, so growth covers the whole window
    let drop = 0;
    while (drop + 1 < this.times.length && this.times[drop + 1]! <= nowMs - this.windowMs) drop++;
    if (drop > 0) {
      this.times.splice(0, drop);
      this.values.splice(0, drop);
    }
  }

  /** Growth over the window (or since the first sample, when younger). */
  growth(): number {
    if (this.values.length < 2) return 0;
    return this.values.at(-1)! - this.values[0]!;
  }
}

export interface CpuBudgetOptions {
  /** Share of one core a target may use over the window (default 0.05). */
  share?: number;
  /** The window, ms (default 10,000). */
  windowMs?: number;
  /** Times a target may hit its budget within `strikeWindowMs` before it is stopped (default 3). */
  maxStrikes?: number;
  /** Default 60,000. */
  strikeWindowMs?: number;
}

export type CpuVerdict = 'ok' | 'throttle' | 'resume' | 'stop';

/**
 * A target's CPU budget: over `share` of one core across the window it is throttled (its events
 * are counted but not run: lost to it, and said so), resumed once the window's use falls to half
 * the budget, and stopped when it hits the budget `maxStrikes` times within the strike window.
 */
export class CpuBudget {
  readonly budgetNs: number;
  readonly windowMs: number;
  private readonly used: WindowedCounter;
  private readonly maxStrikes: number;
  private readonly strikeWindowMs: number;
  private strikes: number[] = [];
  throttled = false;

  constructor(options: CpuBudgetOptions = {}) {
    this.windowMs = options.windowMs ?? 10_000;
    this.budgetNs = (options.share ?? 0.05) * this.windowMs * 1e6;
    this.used = new WindowedCounter(this.windowMs);
    this.maxStrikes = options.maxStrikes ?? 3;
    this.strikeWindowMs = options.strikeWindowMs ?? 60_000;
  }

  /** CPU used over the window, ns. */
  get usedNs(): number {
    return this.used.growth();
  }

  /** Records the target's cumulative CPU time and says what to do. */
  check(nowMs: number, cpuNs: number): CpuVerdict {
    this.used.add(nowMs, cpuNs);
    const used = this.used.growth();
    if (!this.throttled) {
      if (used <= this.budgetNs) return 'ok';
      this.strikes = this.strikes.filter((t) => t > nowMs - this.strikeWindowMs);
      this.strikes.push(nowMs);
      if (this.strikes.length >= this.maxStrikes) return 'stop';
      this.throttled = true;
      return 'throttle';
    }
    if (used <= this.budgetNs / 2) {
      this.throttled = false;
      return 'resume';
    }
    return 'ok';
  }
}

/** Faults over the last minute: past `maxPerMinute` the target is stopped with its fault. */
export class FaultRate {
  private readonly faults = new WindowedCounter(60_000);
  constructor(readonly maxPerMinute: number) {}

  /** True when the faults of the last minute exceed the limit. */
  check(nowMs: number, faults: number): boolean {
    this.faults.add(nowMs, faults);
    return this.faults.growth() > this.maxPerMinute;
  }

  get lastMinute(): number {
    return this.faults.growth();
  }
}
