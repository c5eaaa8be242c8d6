// A vitest reporter that ends the run with one plain line, `N passed, N failed, N skipped`,
// which CI reads. A test file that fails to load (syntax error, failing import) has no tests to
// count, so each such file counts as one failure: a broken file can never look like a green run.

/** @implements {import('vitest/node').Reporter} */
export default class SummaryReporter {
  /** @param {ReadonlyArray<import('vitest/node').TestModule>} testModules */
  onTestRunEnd(testModules, unhandledErrors) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let counted = 0;
      for (const test of mod.children.allTests()) {
        counted++;
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (counted === 0 && mod.state() === 'failed') failed++;
      else if (mod.state() === 'failed' && mod.errors().length > 0) failed++;
    }
    failed += unhandledErrors.length;
    // Printed last, after vitest's own summary, so it is the closing line of the run.
    process.nextTick(() => {
      process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    });
  }
}
