import { describe, expect, it } from 'vitest';
import { arr, either, int, obj, oneOf, opt, rec, str } from './answer-shape.js';

describe('answer shapes', () => {
  const shape = either(obj({ ok: oneOf(true), n: int(0, 10) }), obj({ ok: oneOf(false), items: arr(obj({ id: str(4, /^[a-z]+$/) }), 2) }));
  it.each([
    [{ ok: true, n: 3 }, undefined],
    [{ ok: false, items: [{ id: 'ab' }] }, undefined],
    [{ ok: true, n: 11 }, 'n: not an integer in [0, 10]'],
    [{ ok: true, n: 1.5 }, 'n: not an integer in [0, 10]'],
    [{ ok: false, items: [{ id: 'ab' }, { id: 'toolong' }] }, 'ok: not one of true'],
    ['<html>', 'answer: not an object'],
    [null, 'answer: not an object'],
  ])('checks %j', (value, expected) => {
    expect(shape(value, '')).toBe(expected);
  });
  it('names the path of what does not fit', () => {
    expect(obj({ items: arr(obj({ id: str(4, /^[a-z]+$/) }), 2) })({ items: [{ id: 'ab' }, { id: 'AB' }] }, '')).toBe('items.1.id: not /^[a-z]+$/');
    expect(arr(int(0, 1), 2)([0, 1, 0], 'xs')).toBe('xs: more than 2 items');
  });
  it('checks records (a deployment\'s options) by key and value, and optional fields', () => {
    const options = obj({ options: opt(rec(/^[a-z_]+$/, str(5, /^\d+$/), 2)) });
    expect(options({ options: { a: '1', b_c: '22' } }, '')).toBeUndefined();
    expect(options({}, '')).toBeUndefined();
    expect(options({ options: { 'a-b': '1' } }, '')).toBe('options: key "a-b" is not /^[a-z_]+$/');
    expect(options({ options: { a: 1 } }, '')).toBe('options.a: not a string');
    expect(options({ options: { a: '1', b: '2', c: '3' } }, '')).toBe('options: more than 2 keys');
    expect(options({ options: ['1'] }, '')).toBe('options: not an object');
  });
});
