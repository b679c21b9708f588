// The explorer's script editor: CodeMirror 6 with Python highlighting and indentation. Bundled
// by build.mjs into sparsetir/explorer/static/editor.js as the global `SparsetirEditor`, which
// the page's script (explorer.js) uses when the script pane is edited.
import { Compartment, EditorState, RangeSet, StateEffect, StateField } from "@codemirror/state";
import {
  EditorView, Decoration, GutterMarker, drawSelection, gutterLineClass, highlightActiveLine,
  highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, indentOnInput, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { python } from "@codemirror/lang-python";

// The located error of the last compile: its line is marked in the text and in the line numbers.
const setError = StateEffect.define();
const errorLine = StateField.define({
  create: () => null,
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setError)) value = effect.value;
    return value && tr.docChanged ? { ...value, line: Math.min(value.line, tr.state.doc.lines) } : value;
  },
  provide: (field) => [
    EditorView.decorations.from(field, (error) => (view) => {
      if (!error || error.line > view.state.doc.lines) return Decoration.none;
      const line = view.state.doc.line(error.line);
      return Decoration.set([Decoration.line({ class: "cm-error-line", attributes: { title: error.message } }).range(line.from)]);
    }),
    gutterLineClass.compute([field], (state) => {
      const error = state.field(field);
      if (!error || error.line > state.doc.lines) return RangeSet.empty;
      return RangeSet.of([errorMarker.range(state.doc.line(error.line).from)]);
    }),
  ],
});
const errorMarker = new (class extends GutterMarker { elementClass = "cm-error-gutter"; })();

/** An editor of `text` in `parent`; `onChange(text)` after every edit, `onCompile()` on Ctrl+Enter;
 * `wrap`: long lines wrap. */
export function createEditor(parent, { text, onChange, onCompile, wrap }) {
  const wrapping = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), drawSelection(),
        indentOnInput(), bracketMatching(), highlightActiveLine(), indentUnit.of("    "), EditorState.tabSize.of(4),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }), python(), errorLine,
        wrapping.of(wrap ? EditorView.lineWrapping : []),
        // Tab indents (Escape, then Tab, leaves the editor, as CodeMirror documents)
        keymap.of([{ key: "Mod-Enter", run: () => { onCompile(); return true; } }, indentWithTab, ...defaultKeymap, ...historyKeymap]),
        EditorView.updateListener.of((update) => { if (update.docChanged) onChange(update.state.doc.toString()); }),
        EditorView.theme({ "&": { height: "100%" }, ".cm-scroller": { fontFamily: "inherit" } }),
      ],
    }),
  });
  return {
    view,
    text: () => view.state.doc.toString(),
    focus: () => view.focus(),
    /** Mark `line` (1-based) as the error's, put the cursor at `col` and bring it into view. */
    showError(line, col, message) {
      if (!line || line > view.state.doc.lines) return;
      const at = view.state.doc.line(line);
      const pos = Math.min(at.to, at.from + Math.max(0, (col || 1) - 1));
      view.dispatch({ effects: [setError.of({ line, message }), EditorView.scrollIntoView(pos, { y: "center" })],
        selection: { anchor: pos, head: Math.min(at.to, pos + 1) } });
      view.focus();
    },
    wrap(on) {
      view.dispatch({ effects: wrapping.reconfigure(on ? EditorView.lineWrapping : []) });
    },
  };
}
