// The status bar item (active file: tokens per session, grade; workspace total) and the per-file
// cost table it opens. Both use the server's custom request "unveil/fileReport".
import * as vscode from 'vscode';

export const FILE_REPORT = 'unveil/fileReport';
export const MODEL_VIEW = 'unveil/modelView';

export interface PriceRow {
  model: string;
  modelId: string;
  inputPerMTok: number;
  approx: boolean;
  text: { perSession: string; perInvoke: string; per1000Sessions: string };
}

export interface FileReport {
  uri: string;
  version: number | null;
  kind: string;
  kindLabel: string;
  grade: string;
  findings: { error: number; warning: number; information: number; hint: number };
  tokens: null | {
    session: number; invoke: number; total: number; body: number; basis: string; notes: string[];
    sections: Array<{ line: number; level: number; title: string; tokens: number }>;
  };
  prices: PriceRow[];
  workspace: null | { files: number; session: number; invoke: number; truncated: boolean };
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Status bar text, e.g. "$(eye) unveil C · 35 tok/session · workspace 1,234". */
export function statusText(r: FileReport): string {
  const parts = [`$(eye) unveil ${r.grade}`];
  parts.push(r.tokens ? `${fmt(r.tokens.session)} tok/session` : '… tok');
  if (r.workspace) {
    parts.push(`workspace ${fmt(r.workspace.session)}`);
  }
  return parts.join(' · ');
}

/** The cost table as markdown (opened as a read-only document). */
export function reportMarkdown(r: FileReport, name: string): string {
  const lines = [`# unveil · ${name}`, '', `${r.kindLabel} · grade **${r.grade}** · ` +
    `${r.findings.error} errors, ${r.findings.warning} warnings, ${r.findings.information} info`, ''];
  if (!r.tokens) {
    lines.push('Token counts are still loading.');
  } else {
    lines.push(`**${fmt(r.tokens.session)} tok/session · ${fmt(r.tokens.invoke)} tok on invoke** ` +
      `(${fmt(r.tokens.total)} tok in the whole file)`, '', r.tokens.basis, '');
    if (r.prices.length) {
      lines.push('| Model | USD per M input tok | per session | once invoked | per 1,000 sessions |', '|---|--:|--:|--:|--:|');
      for (const p of r.prices) {
        lines.push(`| ${p.model} | ${p.inputPerMTok} | ${p.text.perSession} | ${p.text.perInvoke} | ${p.text.per1000Sessions} |`);
      }
      if (r.prices.some((p) => p.approx)) {
        lines.push('', '≈: estimated for the model\'s own tokenizer from the o200k count.');
      }
      lines.push('');
    }
    if (r.tokens.sections.length) {
      lines.push('| Line | Section | Tokens |', '|--:|---|--:|');
      for (const s of r.tokens.sections) {
        lines.push(`| ${s.line + 1} | ${'#'.repeat(s.level)} ${s.title.replace(/\|/g, '\\|')} | ${fmt(s.tokens)} |`);
      }
      lines.push('');
    }
    for (const note of r.tokens.notes) {
      lines.push(`> ${note}`, '');
    }
  }
  if (r.workspace) {
    lines.push(`Workspace: ${fmt(r.workspace.files)} agent files, ${fmt(r.workspace.session)} tok/session, ` +
      `${fmt(r.workspace.invoke)} tok on invoke${r.workspace.truncated ? ' (first files only)' : ''}.`);
  }
  return lines.join('\n') + '\n';
}

/** Read-only virtual documents: the model view and the cost table. */
export class VirtualDocuments implements vscode.TextDocumentContentProvider {
  static readonly scheme = 'unveil';
  private readonly contents = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  set(uri: vscode.Uri, text: string): void {
    this.contents.set(uri.toString(), text);
    this.emitter.fire(uri);
  }
}

export class StatusBar implements vscode.Disposable {
  readonly item = vscode.window.createStatusBarItem('unveil.status', vscode.StatusBarAlignment.Right, 100);
  private timer: NodeJS.Timeout | undefined;
  private retries = 0;
  private readonly disposables: vscode.Disposable[] = [];
  /** The last report shown (for the cost table and the tests). */
  last: FileReport | undefined;

  constructor(
    private readonly request: (uri: vscode.Uri, workspace: boolean) => Promise<FileReport | null | undefined>,
    private readonly applies: (doc: vscode.TextDocument) => boolean,
  ) {
    this.item.name = 'unveil';
    this.item.command = 'unveil.showFileReport';
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule(0)),
      vscode.languages.onDidChangeDiagnostics((e) => {
        const active = vscode.window.activeTextEditor?.document.uri.toString();
        if (active && e.uris.some((u) => u.toString() === active)) {
          this.schedule(200);
        }
      }),
      vscode.workspace.onDidSaveTextDocument(() => this.schedule(200)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('unveil')) {
          this.schedule(500);
        }
      }),
    );
  }

  schedule(delay: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), delay);
  }

  async update(): Promise<void> {
    const doc = vscode.window.activeTextEditor?.document;
    const enabled = vscode.workspace.getConfiguration('unveil').get<boolean>('statusBar', true);
    if (!doc || !enabled || !this.applies(doc)) {
      this.item.hide();
      return;
    }
    const workspace = vscode.workspace.getConfiguration('unveil', doc.uri).get<boolean>('workspaceScan', true);
    let report: FileReport | null | undefined;
    try {
      report = await this.request(doc.uri, workspace);
    } catch {
      report = undefined;
    }
    if (vscode.window.activeTextEditor?.document !== doc) {
      return; // the user moved on; a newer update is scheduled
    }
    if (!report) {
      this.item.hide();
      return;
    }
    this.last = report;
    this.item.text = statusText(report);
    const tip = new vscode.MarkdownString(reportTooltip(report));
    this.item.tooltip = tip;
    this.item.backgroundColor = report.findings.error
      ? new vscode.ThemeColor('statusBarItem.errorBackground')
      : report.findings.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
    if (!report.tokens && this.retries++ < 30) {
      this.schedule(1000); // tokenizer still loading
    } else if (report.tokens) {
      this.retries = 0;
    }
  }

  hide(): void {
    this.item.hide();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.item.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}

function reportTooltip(r: FileReport): string {
  const lines = [`**unveil** · ${r.kindLabel} · grade **${r.grade}**`];
  if (r.tokens) {
    lines.push(`${fmt(r.tokens.session)} tok/session · ${fmt(r.tokens.invoke)} tok on invoke`);
  }
  if (r.workspace) {
    lines.push(`Workspace: ${fmt(r.workspace.files)} agent files · ${fmt(r.workspace.session)} tok/session`);
  }
  lines.push('Click for the cost table.');
  return lines.join('\n\n');
}
