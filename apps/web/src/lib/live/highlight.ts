// Syntax highlighting for the live editor: CodeMirror 6 stream parsers (no Lezer grammar) for the
// script language (bpftrace-like: probes, args.FIELD, @maps, $variables, builtins, strings,
// comments) and for Probeyard assembly (directives, sections, labels, registers, helpers, field
// operands such as sched_switch.next_pid).
import { HighlightStyle, type StreamParser, StreamLanguage } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';

const scriptKeywords = new Set(['if', 'else', 'return', 'unroll', 'while', 'break', 'continue', 'for', 'let']);
const scriptBuiltins = new Set([
  'pid', 'tid', 'uid', 'gid', 'comm', 'cpu', 'nsecs', 'elapsed', 'probe', 'curtask', 'retval', 'arg0', 'arg1', 'arg2', 'arg3',
  'count', 'sum', 'min', 'max', 'avg', 'stats', 'hist', 'lhist', 'printf', 'print', 'clear', 'zero', 'delete', 'exit', 'str', 'strncmp', 'time',
  'uint8', 'uint16', 'uint32', 'uint64', 'int8', 'int16', 'int32', 'int64',
]);

interface ScriptState {
  inComment: boolean;
}

/** Stream parser of the script language. */
export const scriptParser: StreamParser<ScriptState> = {
  name: 'probeyard-script',
  startState: () => ({ inComment: false }),
  token(stream, state) {
    if (state.inComment) {
      if (stream.skipTo('*/')) {
        stream.pos += 2;
        state.inComment = false;
      } else stream.skipToEnd();
      return 'comment';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('/*')) {
      state.inComment = true;
      return 'comment';
    }
    if (stream.peek() === '"') {
      stream.next();
      let escaped = false;
      for (let c = stream.next(); c !== undefined; c = stream.next()) {
        if (c === '"' && !escaped) break;
        escaped = !escaped && c === '\\';
      }
      return 'string';
    }
    // a probe: tracepoint:sys:event, t:sys:event (wildcards), interval:s:1, BEGIN, END
    if (stream.sol() || /[\s,]/.test(stream.string.charAt(stream.pos - 1) || ' ')) {
      if (stream.match(/^(?:tracepoint|t|interval|i|kprobe|kretprobe|uprobe|usdt|profile)(?::[\w*?.]*)+/)) return 'typeName';
      if (stream.match(/^(?:BEGIN|END)\b/)) return 'typeName';
    }
    if (stream.match(/^args(?:\.|->)/)) {
      stream.match(/^\w+/);
      return 'propertyName';
    }
    if (stream.match(/^@\w*/)) return 'variableName.special';
    if (stream.match(/^\$\w+/)) return 'variableName';
    if (stream.match(/^(?:0x[0-9a-fA-F]+|\d+)/)) return 'number';
    const word = stream.match(/^[A-Za-z_]\w*/) as RegExpMatchArray | null;
    if (word) {
      if (scriptKeywords.has(word[0])) return 'keyword';
      if (scriptBuiltins.has(word[0])) return 'builtin';
      return 'variableName';
    }
    stream.next();
    return /[{}()[\]]/.test(stream.current()) ? 'bracket' : 'operator';
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } } },
};

/** Stream parser of Probeyard assembly. */
export const asmParser: StreamParser<null> = {
  name: 'probeyard-asm',
  startState: () => null,
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match('#') || stream.match(';') || stream.match('//')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.peek() === '"') {
      stream.next();
      stream.skipTo('"') ? stream.next() : stream.skipToEnd();
      return 'string';
    }
    if (stream.sol() && stream.match(/^[A-Za-z_.][\w.]*:/)) return 'labelName';
    if (stream.match(/^\.\w+/)) {
      if (stream.current() === '.section') {
        stream.eatSpace();
        stream.match(/^\S+/);
      }
      return 'meta';
    }
    if (stream.match(/^[rw](?:10|[0-9])\b/)) return 'variableName.special';
    if (stream.match(/^(?:[us](?:8|16|32|64))\b/)) return 'typeName';
    if (stream.match(/^bpf_\w+/)) return 'builtin';
    if (stream.match(/^[A-Za-z_]\w*\.[A-Za-z_]\w*/)) return 'propertyName';
    if (stream.match(/^-?(?:0x[0-9a-fA-F]+|\d+)/)) return 'number';
    const word = stream.match(/^[A-Za-z_]\w*/) as RegExpMatchArray | null;
    if (word) return /^(?:call|goto|if|exit|lock|ll|be16|be32|be64|le16|le32|le64|ja|callx)$/.test(word[0]) ? 'keyword' : 'variableName';
    stream.next();
    return 'operator';
  },
  languageData: { commentTokens: { line: '#' } },
};

export const scriptLanguage = StreamLanguage.define(scriptParser);
export const asmLanguage = StreamLanguage.define(asmParser);

/** Colours with at least 4.5:1 contrast on white (axe's AA for text). */
export const liveHighlightStyle = HighlightStyle.define([
  { tag: t.comment, color: '#5c6370', fontStyle: 'italic' },
  { tag: t.string, color: '#0b6e1f' },
  { tag: t.number, color: '#8a3b00' },
  { tag: t.keyword, color: '#8b1c8b', fontWeight: '600' },
  { tag: t.typeName, color: '#1f4fbf', fontWeight: '600' },
  { tag: t.propertyName, color: '#005f73' },
  { tag: t.special(t.variableName), color: '#a3123a' },
  { tag: t.standard(t.variableName), color: '#6a3d9a' },
  { tag: t.labelName, color: '#1f4fbf', fontWeight: '600' },
  { tag: t.meta, color: '#7a4a00' },
]);
