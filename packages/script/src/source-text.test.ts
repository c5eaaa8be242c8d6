import { describe, expect, it } from 'vitest';
import { formatDiagnostic, SourceText } from './source-text.js';

describe('SourceText', () => {
  it.each([
    [0, 1, 1],
    [3, 1, 4],
    [4, 2, 1],
    [9, 3, 1],
    [10, 3, 2],
    [100, 3, 4],
  ])('offset %d is line %d column %d', (offset, line, column) => {
    expect(new SourceText('abc\ndefg\nhij').position(offset)).toEqual({ line, column });
  });

  it('a caret under the place, tabs kept so it lines up, ~ to the end of the span on that line', () => {
    const src = new SourceText('BEGIN {\n\t@x = nope;\n}', 'prog.bt');
    const d = src.diagnostic('not-found', { start: 14, end: 18 }, 'nope: unknown identifier', 'variables are written $name');
    expect(formatDiagnostic(src, d)).toBe('prog.bt:2:7: error: nope: unknown identifier\n\t@x = nope;\n\t     ^~~~\nhint: variables are written $name\n');
  });

  it('a span that runs past its line is underlined to the line end; one at the end of the text gets a caret', () => {
    const src = new SourceText('BEGIN { @x = 1', 's');
    expect(formatDiagnostic(src, src.diagnostic('syntax', { start: 8, end: 100 }, 'm'))).toBe('s:1:9: error: m\nBEGIN { @x = 1\n        ^~~~~~\n');
    expect(formatDiagnostic(src, src.diagnostic('syntax', { start: 14, end: 14 }, 'm'))).toBe('s:1:15: error: m\nBEGIN { @x = 1\n              ^\n');
  });
});
