'use client';

// CodeMirror 6 in a React component: the document is CodeMirror's own (React only hears of
// changes), the language can be switched, and diagnostics are pushed in from outside (the
// in-browser compile) and drawn under the text and in the lint gutter.
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { bracketMatching, syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { Compartment, EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, keymap, lineNumbers } from '@codemirror/view';
import { useEffect, useRef } from 'react';
import { asmLanguage, liveHighlightStyle, scriptLanguage } from '../../lib/live/highlight';
import type { LiveDiagnostic, LiveLanguage } from '../../lib/live/check';

export function CodeEditor({
  initial,
  language,
  diagnostics,
  onChange,
  label,
}: {
  initial: string;
  language: LiveLanguage;
  diagnostics: LiveDiagnostic[];
  onChange: (text: string) => void;
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const lang = useRef(new Compartment());
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: initial,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightActiveLine(),
          history(),
          drawSelection(),
          bracketMatching(),
          lintGutter(),
          syntaxHighlighting(liveHighlightStyle),
          lang.current.of(language === 'asm' ? asmLanguage : scriptLanguage),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorView.contentAttributes.of({ 'aria-label': label, 'data-testid': 'live-source' }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) changed.current(u.state.doc.toString());
          }),
          EditorView.theme({
            '&': { border: '1px solid #8a8f98', borderRadius: '6px', fontSize: '14px', minHeight: '12rem' },
            '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace', minHeight: '12rem' },
            '.cm-gutters': { backgroundColor: '#f4f5f7', color: '#4a4f57' },
            '&.cm-focused': { outline: '2px solid #1f5fbf' },
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // the editor is made once; language and diagnostics are pushed by the effects below
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    view.current?.dispatch({ effects: lang.current.reconfigure(language === 'asm' ? asmLanguage : scriptLanguage) });
  }, [language]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const length = v.state.doc.length;
    const ds: Diagnostic[] = diagnostics.map((d) => {
      const from = Math.min(d.from, length);
      return { from, to: Math.min(Math.max(d.to, from), length), severity: d.severity, message: d.hint ? `${d.message}\n${d.hint}` : d.message, source: 'probeyard' };
    });
    v.dispatch(setDiagnostics(v.state, ds));
  }, [diagnostics]);

  return <div ref={host} className="live-editor" />;
}
