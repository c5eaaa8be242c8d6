/** Folders searched for the corpus, first found wins. */
export declare const corpusCandidates: readonly string[];
/**
 * The corpus folder, or `sub` inside it (`'trace-dat/big/big.dat'`) when given, as an absolute
 * path; undefined when it is absent (a bench says what it skips and goes on).
 */
export declare function findCorpus(sub?: string): string | undefined;
