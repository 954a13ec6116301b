// Decorations that make invisible characters visible: VS Code draws nothing for zero-width
// characters, bidi controls or tag characters in markdown. Each run gets a small badge, e.g.
// "U+200B" or 'TAGS "ignore previous…"', drawn before the (empty-looking) range.
import * as vscode from 'vscode';

/** Default_Ignorable, bidi controls, format and control characters (not tab/LF/CR), U+2028/9. */
export const INVISIBLE = /(?:[\u{E0020}-\u{E007E}]+)|(?![\t\n\r])[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Cf}\p{Cc}\p{Zl}\p{Zp}]/gu;

const MAX_DECORATIONS = 5000;
const MAX_TAG_PREVIEW = 40;

export interface InvisibleRun {
  start: number; // UTF-16 offsets, as vscode.TextDocument.positionAt expects
  end: number;
  label: string;
}

/** Runs of invisible characters in `text`, in order. Tag runs (U+E0020..U+E007E) are decoded. */
export function findInvisible(text: string, limit = MAX_DECORATIONS): InvisibleRun[] {
  const out: InvisibleRun[] = [];
  INVISIBLE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = INVISIBLE.exec(text)) !== null && out.length < limit) {
    const s = m[0];
    const cp = s.codePointAt(0)!;
    let label: string;
    if (cp >= 0xe0020 && cp <= 0xe007e) {
      const decoded = Array.from(s, (ch) => String.fromCodePoint(ch.codePointAt(0)! - 0xe0000)).join('');
      label = `TAGS "${decoded.length > MAX_TAG_PREVIEW ? decoded.slice(0, MAX_TAG_PREVIEW) + '…' : decoded}"`;
    } else {
      label = 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
    }
    out.push({ start: m.index, end: m.index + s.length, label });
  }
  return out;
}

export class InvisibleDecorations implements vscode.Disposable {
  private readonly type = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editorWarning.background'),
    border: '1px solid',
    borderColor: new vscode.ThemeColor('editorWarning.foreground'),
    borderRadius: '2px',
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Last decorated runs per document URI (read by the extension-host tests through the API). */
  readonly shown = new Map<string, InvisibleRun[]>();

  constructor(private readonly applies: (doc: vscode.TextDocument) => boolean) {
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.schedule()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (vscode.window.visibleTextEditors.some((ed) => ed.document === e.document)) {
          this.schedule();
        }
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('unveil.decorations')) {
          this.schedule();
        }
      }),
    );
    this.schedule();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.updateAll(), 100);
  }

  updateAll(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      this.update(editor);
    }
  }

  private update(editor: vscode.TextEditor): void {
    const doc = editor.document;
    const enabled = vscode.workspace.getConfiguration('unveil', doc.uri).get<boolean>('decorations', true);
    if (!enabled || !this.applies(doc)) {
      editor.setDecorations(this.type, []);
      this.shown.delete(doc.uri.toString());
      return;
    }
    const runs = findInvisible(doc.getText());
    this.shown.set(doc.uri.toString(), runs);
    editor.setDecorations(this.type, runs.map((r) => ({
      range: new vscode.Range(doc.positionAt(r.start), doc.positionAt(r.end)),
      hoverMessage: new vscode.MarkdownString(`Invisible to you, read by the model: \`${r.label}\``),
      renderOptions: {
        before: {
          contentText: r.label,
          color: new vscode.ThemeColor('editorWarning.foreground'),
          backgroundColor: new vscode.ThemeColor('editorWarning.background'),
          fontStyle: 'italic',
          margin: '0 1px',
        },
      },
    })));
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.type.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}
