import { FormatError } from '../errors.js';

/**
 * Token kinds of the C subset printed in `print fmt:` lines and array lengths of tracefs format
 * files (the kernel stringifies the `TP_printk()` arguments after preprocessing).
 */
export const TokenKind = {
  Ident: 0,
  Number: 1,
  String: 2,
  Char: 3,
  Punct: 4,
  End: 5,
} as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

export interface Token {
  kind: TokenKind;
  /** Source text of the token (for strings and chars: with quotes and escapes as written). */
  text: string;
  /** Decoded value of a string or char literal. */
  value?: string;
  /** Character offset in the lexed text. */
  charOffset: number;
}

// Longest first so `<<=` wins over `<<` and `<`.
const punctuators = [
  '...', '<<=', '>>=',
  '->', '++', '--', '<<', '>>', '<=', '>=', '==', '!=', '&&', '||', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '##',
  '(', ')', '[', ']', '{', '}', ',', ';', '?', ':', '.', '+', '-', '*', '/', '%', '&', '|', '^', '~', '!', '<', '>', '=', '#',
];

/** Punctuators by first character, longest first. */
const punctuatorsByChar = new Map<string, string[]>();
for (const p of punctuators) {
  const list = punctuatorsByChar.get(p[0]!) ?? [];
  list.push(p);
  punctuatorsByChar.set(p[0]!, list);
}

const maxTokens = 1 << 20;

function isIdentStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x24;
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 0x30 && c <= 0x39);
}
function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Decodes the C escapes of a string or char literal body (without quotes). */
export function decodeCEscapes(body: string): string {
  if (body.indexOf('\\') < 0) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\' || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const e = body[++i]!;
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\x07'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case 'e': out += '\x1b'; break;
      case 'x': {
        let j = i + 1;
        while (j < body.length && j < i + 3 && /[0-9a-fA-F]/.test(body[j]!)) j++;
        out += j > i + 1 ? String.fromCharCode(Number.parseInt(body.slice(i + 1, j), 16)) : 'x';
        i = j - 1;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          let j = i;
          while (j < body.length && j < i + 3 && body[j]! >= '0' && body[j]! <= '7') j++;
          out += String.fromCharCode(Number.parseInt(body.slice(i, j), 8) & 0xff);
          i = j - 1;
        } else {
          out += e;
        }
    }
  }
  return out;
}

/**
 * Splits C text into tokens. String literals may contain raw newlines (some kernels print them).
 * Throws {@link FormatError} `malformed` for an unterminated literal or a character C has no use
 * for; `line` is counted from `firstLine`.
 */
export function lexC(text: string, firstLine = 1): Token[] {
  const tokens: Token[] = [];
  const n = text.length;
  let i = 0;
  const fail = (msg: string, at: number): never => {
    let line = firstLine;
    for (let k = 0; k < at && k < n; k++) if (text.charCodeAt(k) === 10) line++;
    throw new FormatError('malformed', `${msg} at character ${at}`, { line });
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0b || c === 0x0c) {
      i++;
      continue;
    }
    if (tokens.length >= maxTokens) fail(`more than ${maxTokens} tokens`, i);
    const start = i;
    if (isIdentStart(c)) {
      i++;
      while (i < n && isIdentPart(text.charCodeAt(i))) i++;
      tokens.push({ kind: TokenKind.Ident, text: text.slice(start, i), charOffset: start });
      continue;
    }
    if (isDigit(c) || (c === 0x2e && i + 1 < n && isDigit(text.charCodeAt(i + 1)))) {
      i++;
      // pp-number: digits, letters and dots (`0x1fUL`, `1ULL`).
      while (i < n && (isIdentPart(text.charCodeAt(i)) || text.charCodeAt(i) === 0x2e)) i++;
      tokens.push({ kind: TokenKind.Number, text: text.slice(start, i), charOffset: start });
      continue;
    }
    if (c === 0x22 || c === 0x27) {
      i++;
      while (i < n && text.charCodeAt(i) !== c) {
        if (text.charCodeAt(i) === 0x5c) i++;
        i++;
      }
      if (i >= n) fail(c === 0x22 ? 'unterminated string literal' : 'unterminated character literal', start);
      i++;
      const raw = text.slice(start, i);
      tokens.push({
        kind: c === 0x22 ? TokenKind.String : TokenKind.Char,
        text: raw,
        value: decodeCEscapes(raw.slice(1, -1)),
        charOffset: start,
      });
      continue;
    }
    let matched: string | undefined;
    for (const p of punctuatorsByChar.get(text[i]!) ?? []) {
      if (text.startsWith(p, i)) {
        matched = p;
        break;
      }
    }
    if (matched === undefined) fail(`unexpected character '${text[i]}'`, i);
    i += matched!.length;
    tokens.push({ kind: TokenKind.Punct, text: matched!, charOffset: start });
  }
  tokens.push({ kind: TokenKind.End, text: '', charOffset: n });
  return tokens;
}
