import { constantContext, RenderError, evaluate } from './evaluate.js';
import type { PrintExpr } from './print-fmt-tree.js';

/**
 * The value of a C constant expression (`32 + 1`, `sizeof(u64) * 4`), or undefined when it
 * names something unknown (`TASK_COMM_LEN`, `sizeof(struct sockaddr_in6)`).
 */
export function evaluateConstant(expr: PrintExpr, longSize: 4 | 8): bigint | undefined {
  try {
    const v = evaluate(expr, constantContext(longSize));
    return v.k === 'int' ? v.value : undefined;
  } catch (e) {
    if (e instanceof RenderError) return undefined;
    throw e;
  }
}
