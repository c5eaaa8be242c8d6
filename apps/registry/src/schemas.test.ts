import { describe, expect, it } from 'vitest';
import { checkInput, labelKeyProblem, labelValueProblem, nestingDepth, unstorableText } from './schemas.js';

const nested = (depth: number): unknown => {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

describe('unstorableText', () => {
  it.each([
    ['plain', undefined],
    ['crab 🦀 naïve\ttab\nline', undefined],
    ['', undefined],
    ['ab\u0000', 'contains a NUL character (U+0000) at character 2, which cannot be stored'],
    ['\ud800', 'contains a lone UTF-16 surrogate (U+D800) at character 0, which is not Unicode text and cannot be stored'],
    ['x\udbff', 'contains a lone UTF-16 surrogate (U+DBFF) at character 1, which is not Unicode text and cannot be stored'],
    ['🦀\udc00', 'contains a lone UTF-16 surrogate (U+DC00) at character 2, which is not Unicode text and cannot be stored'],
    ['\udc00\ud800', 'contains a lone UTF-16 surrogate (U+DC00) at character 0, which is not Unicode text and cannot be stored'],
  ])('%j: %s', (s, want) => {
    expect(unstorableText(s)).toBe(want);
  });
});

describe('checkInput', () => {
  it.each([
    ['a clean input', { a: [1, 'x', { b: null, c: true }] }, undefined],
    ['a NUL deep inside', { a: [1, { b: 'x\u0000' }] }, { path: ['a', 1, 'b'], message: 'contains a NUL character (U+0000) at character 1, which cannot be stored' }],
    ['a bare string', '\ud800', { path: [], message: 'contains a lone UTF-16 surrogate (U+D800) at character 0, which is not Unicode text and cannot be stored' }],
    ['a bad key', { a: { 'k\u0000': 1 } }, { path: ['a'], message: 'a key contains a NUL character (U+0000) at character 1, which cannot be stored' }],
  ])('%s', (_, input, want) => {
    expect(checkInput(input)).toEqual(want);
  });
  // (Built in the test: a value 100,000 levels deep cannot be a test's printed parameter.)
  it.each([
    [40, undefined],
    [41, { path: [0, 0, 0, 0, 0, 0, '…'], message: 'nested more than 40 levels deep (the limit is 40)' }],
    [100_000, { path: [0, 0, 0, 0, 0, 0, '…'], message: 'nested more than 40 levels deep (the limit is 40)' }],
  ])('%i levels', (depth, want) => {
    expect(checkInput(nested(depth))).toEqual(want);
  });
});

describe('nestingDepth', () => {
  it.each([
    [0, 0],
    [{}, 1],
    [[], 1],
    [{ a: [1, { b: [] }] }, 4],
  ])('%#: %i levels', (v, want) => {
    expect(nestingDepth(v)).toBe(want);
  });
  it('counts 100,000 levels without a stack, and stops early when asked', () => {
    expect(nestingDepth(nested(100_000))).toBe(100_000);
    expect(nestingDepth(nested(100_000), 32)).toBe(33);
  });
});

describe('labels', () => {
  it.each(['env', 'kernel.release', 'node', 'a', 'A_b-c.9', 'probeyard.dev/zone', 'x'.repeat(63), `${'a'.repeat(253)}/x`])('takes the key %j', (k) => {
    expect(labelKeyProblem(k)).toBeUndefined();
  });
  it.each(['', '../x', '/x', 'x/', 'a//b', 'a/b/c', '.x', 'x-', 'a b', 'Up.Case/x', 'x'.repeat(64), `${'a'.repeat(254)}/x`, 'é'])('refuses the key %j', (k) => {
    expect(labelKeyProblem(k)).toMatch(/^label key /);
  });
  it.each([
    ['6.1.0-rc1+', undefined],
    ['', undefined],
    ['a b', undefined],
    ['a,b', 'contains a control character, "," or "=" (a selector could not match it)'],
    ['a\tb', 'contains a control character, "," or "=" (a selector could not match it)'],
    [' a', 'begins or ends with white space (a selector could not match it)'],
    ['v'.repeat(64), 'has 64 characters, the limit is 63'],
  ])('value %j: %s', (v, want) => {
    expect(labelValueProblem(v)).toBe(want);
  });
});
