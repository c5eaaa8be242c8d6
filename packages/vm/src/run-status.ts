// How a run ends, shared by the VM's facade, the interpreter and the compiled tier's glue.

/** How a run ended. */
export const RunStatus = { ok: 0, fault: 1, budgetExhausted: 2 } as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Internal status of {@link interpret}: continue in `tailTarget`. */
export const TAIL_CALL = 3;
