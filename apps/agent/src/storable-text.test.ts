import { describe, expect, it } from 'vitest';
import { storableText, storableValue } from './storable-text.js';

describe('storableText', () => {
  it.each([
    ['plain words', 'plain words'],
    ['crab 🦀', 'crab 🦀'],
    ['comm\u0000\u0000', 'comm\ufffd\ufffd'],
    ['a\ud800b', 'a\ufffdb'],
    ['\udc00', '\ufffd'],
  ])('%j → %j', (s, want) => {
    expect(storableText(s)).toBe(want);
  });

  it('makes every string and key of a status report storable', () => {
    const report = { targetId: 't', status: 'failed', message: 'fault in\u0000x', detail: { code: 'load-fault', moves: ['a\ud800'], fault: { message: 'm' } } };
    expect(storableValue(report)).toEqual({ targetId: 't', status: 'failed', message: 'fault in\ufffdx', detail: { code: 'load-fault', moves: ['a\ufffd'], fault: { message: 'm' } } });
  });
});
