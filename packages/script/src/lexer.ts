import { fail } from './errors.js';

/** Kinds of tokens of the language. */
export type TokenKind =
  /** `pid`, `count`, `args`, `if` */
  | 'ident'
  /** `@`, `@name` (text without the `@`) */
  | 'map'
  /** `$name` (text without the `$`) */
  | 'var'
  /** `$1`: a positional parameter (refused later, with a message) */
  | 'positional'
  | 'int'
  | 'string'
  | 'punct'
  | 'eof';

export interface Token {
  kind: TokenKind;
  /** The name for `ident`/`map`/`var`, the operator for `punct`, the source text otherwise. */
  text: string;
  start: number;
  end: number;
  /** `int`: the value (0 … 2^64-1). */
  int?: bigint;
  /** `string`: the value with escapes decoded. */
  str?: string;
}

const puncts = [
  '<<=', '>>=',
  '->', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<', '>>', '<=', '>=', '==', '!=', '&&', '||',
  '{', '}', '(', ')', '[', ']', ',', ';', ':', '/', '?', '.', '!', '~', '+', '-', '*', '%', '&', '|', '^', '<', '>', '=',
];

const isIdentStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isIdentPart = (c: number) => isIdentStart(c) || isDigit(c);

const U64_MAX = (1n << 64n) - 1n;

/**
 * Reads the script's tokens on demand. The parser calls {@link Scanner.next} for ordinary tokens
 * and {@link Scanner.attachPoint} where a probe's attach point starts (`tracepoint:sched:sched_*`,
 * `interval:s:1`, `uprobe:/bin/bash:readline` read as one word).
 */
export class Scanner {
  pos = 0;

  constructor(readonly text: string) {
    // `#!/usr/bin/env bpftrace` on the first line
    if (text.startsWith('#!')) {
      const nl = text.indexOf('\n');
      this.pos = nl < 0 ? text.length : nl;
    }
  }

  /** Skips blanks and comments; fails on a comment that never ends. */
  skipSpace(): void {
    const t = this.text;
    for (;;) {
      const c = t.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13) {
        this.pos++;
      } else if (c === 47 && t.charCodeAt(this.pos + 1) === 47) {
        const nl = t.indexOf('\n', this.pos);
        this.pos = nl < 0 ? t.length : nl;
      } else if (c === 47 && t.charCodeAt(this.pos + 1) === 42) {
        const close = t.indexOf('*/', this.pos + 2);
        if (close < 0) fail('syntax', { start: this.pos, end: this.pos + 2 }, 'syntax: this comment is never closed', 'close it with */');
        this.pos = close + 2;
      } else {
        return;
      }
    }
  }

  /** The next token (after blanks and comments). */
  next(): Token {
    this.skipSpace();
    const t = this.text;
    const start = this.pos;
    if (start >= t.length) return { kind: 'eof', text: '', start, end: start };
    const c = t.charCodeAt(start);
    if (isIdentStart(c)) {
      let i = start + 1;
      while (i < t.length && isIdentPart(t.charCodeAt(i))) i++;
      this.pos = i;
      return { kind: 'ident', text: t.slice(start, i), start, end: i };
    }
    if (c === 64 /* @ */ || c === 36 /* $ */) {
      let i = start + 1;
      if (c === 36 && isDigit(t.charCodeAt(i))) {
        while (isDigit(t.charCodeAt(i))) i++;
        this.pos = i;
        return { kind: 'positional', text: t.slice(start + 1, i), start, end: i };
      }
      if (isIdentStart(t.charCodeAt(i))) {
        i++;
        while (i < t.length && isIdentPart(t.charCodeAt(i))) i++;
      }
      if (c === 36 && i === start + 1) fail('syntax', { start, end: start + 1 }, "syntax: '$' without a variable name", 'scratch variables are written $name');
      this.pos = i;
      return { kind: c === 64 ? 'map' : 'var', text: t.slice(start + 1, i), start, end: i };
    }
    if (isDigit(c)) return this.number(start);
    if (c === 34 /* " */) return this.string(start);
    for (const p of puncts) {
      if (t.startsWith(p, start)) {
        this.pos = start + p.length;
        return { kind: 'punct', text: p, start, end: this.pos };
      }
    }
    const ch = String.fromCodePoint(t.codePointAt(start)!);
    fail('syntax', { start, end: start + ch.length }, `syntax: unexpected character '${ch}'`);
  }

  /** Looks at the next token without consuming it. */
  peek(): Token {
    const save = this.pos;
    const tok = this.next();
    this.pos = save;
    return tok;
  }

  private number(start: number): Token {
    const t = this.text;
    let i = start;
    let value: bigint;
    if (t[i] === '0' && (t[i + 1] === 'x' || t[i + 1] === 'X')) {
      i += 2;
      const digitsStart = i;
      while (/[0-9a-fA-F_]/.test(t[i] ?? '')) i++;
      const digits = t.slice(digitsStart, i).replaceAll('_', '');
      if (digits === '') fail('syntax', { start, end: i }, `syntax: '${t.slice(start, i)}' has no hex digits`);
      value = BigInt(`0x${digits}`);
    } else {
      while (/[0-9_]/.test(t[i] ?? '')) i++;
      const digits = t.slice(start, i).replaceAll('_', '');
      value = BigInt(digits);
      // 1e6: an integer with a decimal exponent, as bpftrace accepts
      if ((t[i] === 'e' || t[i] === 'E') && isDigit(t.charCodeAt(i + 1))) {
        let j = i + 1;
        while (isDigit(t.charCodeAt(j))) j++;
        const exp = Number(t.slice(i + 1, j));
        if (exp > 19) fail('syntax', { start, end: j }, `syntax: ${t.slice(start, j)} does not fit 64 bits`);
        value *= 10n ** BigInt(exp);
        i = j;
      }
    }
    if (isIdentPart(t.charCodeAt(i))) {
      let j = i;
      while (isIdentPart(t.charCodeAt(j))) j++;
      fail('syntax', { start, end: j }, `syntax: '${t.slice(start, j)}' is not a number`, 'integers are decimal (1000, 1_000, 1e3) or hexadecimal (0x3e8)');
    }
    if (value > U64_MAX) fail('syntax', { start, end: i }, `syntax: ${t.slice(start, i)} does not fit 64 bits`);
    this.pos = i;
    return { kind: 'int', text: t.slice(start, i), start, end: i, int: value };
  }

  private string(start: number): Token {
    const t = this.text;
    let i = start + 1;
    let out = '';
    for (;;) {
      if (i >= t.length || t[i] === '\n') fail('syntax', { start, end: i }, 'syntax: this string is never closed', 'close it with " on the same line');
      const ch = t[i]!;
      if (ch === '"') break;
      if (ch !== '\\') {
        out += ch;
        i++;
        continue;
      }
      const e = t[i + 1];
      const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", a: '\x07', b: '\b', f: '\f', v: '\v', e: '\x1b' };
      if (e !== undefined && simple[e] !== undefined) {
        out += simple[e];
        i += 2;
      } else if (e === 'x' && /^[0-9a-fA-F]{1,2}/.test(t.slice(i + 2))) {
        const hex = /^[0-9a-fA-F]{1,2}/.exec(t.slice(i + 2))![0];
        out += String.fromCharCode(Number.parseInt(hex, 16));
        i += 2 + hex.length;
      } else if (e !== undefined && /[0-7]/.test(e)) {
        const oct = /^[0-7]{1,3}/.exec(t.slice(i + 1))![0];
        const v = Number.parseInt(oct, 8);
        if (v > 255) fail('syntax', { start: i, end: i + 1 + oct.length }, `syntax: escape \\${oct} is above \\377`);
        out += String.fromCharCode(v);
        i += 1 + oct.length;
      } else {
        fail('syntax', { start: i, end: i + 2 }, `syntax: unknown escape '\\${e ?? ''}'`, 'escapes are \\n \\t \\r \\\\ \\" \\xHH and octal \\ooo');
      }
    }
    this.pos = i + 1;
    return { kind: 'string', text: t.slice(start, i + 1), start, end: i + 1, str: out };
  }

  /**
   * An attach point as one word: letters, digits and `_ * ? . - + [ ] : !`, and `/` inside a
   * segment that starts with one (a path: `uprobe:/bin/bash:readline`). Stops at blanks, `,`, `{`
   * and at a `/` that starts a predicate. Returns undefined when no word starts here.
   */
  attachPoint(): Token | undefined {
    this.skipSpace();
    const t = this.text;
    const start = this.pos;
    let i = start;
    let inPath = false;
    while (i < t.length) {
      const ch = t[i]!;
      if (ch === '/') {
        const segmentStart = i === start || t[i - 1] === ':';
        if (segmentStart) inPath = true;
        if (!inPath) break;
        i++;
        continue;
      }
      if (ch === ':') inPath = false;
      if (/[A-Za-z0-9_*?.\-+[\]:!]/.test(ch)) {
        i++;
        continue;
      }
      break;
    }
    if (i === start) return undefined;
    this.pos = i;
    return { kind: 'ident', text: t.slice(start, i), start, end: i };
  }
}
