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

/** A short token count, as the server's inlay hints write it: 950, 1.2k, 52k, 1.2M. */
export function shortTokens(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  for (const [div, unit] of [[1e3, 'k'], [1e6, 'M'], [1e9, 'G']] as Array<[number, string]>) {
    const tenths = Math.floor((n * 10 + div / 2) / div);
    if (tenths < 100) {
      return tenths % 10 ? `${Math.floor(tenths / 10)}.${tenths % 10}${unit}` : `${tenths / 10}${unit}`;
    }
    const whole = Math.floor((n + div / 2) / div);
    if (whole < 1000) {
      return `${whole}${unit}`;
    }
  }
  return `${Math.round(n / 1e9)}G`;
}

/** Status bar text, e.g. "$(eye) unveil C · 35 tok/session · workspace 1.2k tok/session". */
export function statusText(r: FileReport): string {
  const parts = [`$(eye) unveil ${r.grade}`];
  parts.push(r.tokens ? `${fmt(r.tokens.session)} tok/session` : '… tok');
  if (r.workspace) {
    parts.push(`workspace ${shortTokens(r.workspace.session)} tok/session`);
  }
  return parts.join(' · ');
}

/** ``text`` escaped for HTML text and attribute values (every character that could start markup). */
export function escapeHtml(text: string): string {
  return String(text).replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The Content-Security-Policy of the cost report webview: nothing may load (no image, font,
 * script, frame or connection), only the inline style sheet below. */
export const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'";

/** The cost table as a self-contained HTML page for a webview: every value from the file or the
 * server (file name, headings, notes, model names) is escaped, and the CSP blocks every load, so
 * nothing from the scanned file is ever live. */
export function reportHtml(r: FileReport, name: string): string {
  const e = escapeHtml;
  const rows: string[] = [];
  rows.push(`<h1>unveil · <code>${e(name)}</code></h1>`);
  rows.push(`<p>${e(r.kindLabel)} · grade <strong>${e(r.grade)}</strong> · ${r.findings.error} errors, ` +
    `${r.findings.warning} warnings, ${r.findings.information} info</p>`);
  if (!r.tokens) {
    rows.push('<p>Token counts are still loading.</p>');
  } else {
    rows.push(`<p class="total"><strong>${fmt(r.tokens.session)} tok/session · ${fmt(r.tokens.invoke)} tok on invoke</strong> ` +
      `(${fmt(r.tokens.total)} tok in the whole file)</p>`, `<p>${e(r.tokens.basis)}</p>`);
    if (r.prices.length) {
      rows.push('<table class="prices"><thead><tr><th>Model</th><th>USD per M input tok</th><th>per session</th>' +
        '<th>once invoked</th><th>per 1,000 sessions</th></tr></thead><tbody>');
      for (const p of r.prices) {
        rows.push(`<tr><td>${e(p.model)}</td><td class="n">${e(String(p.inputPerMTok))}</td><td class="n">${e(p.text.perSession)}</td>` +
          `<td class="n">${e(p.text.perInvoke)}</td><td class="n">${e(p.text.per1000Sessions)}</td></tr>`);
      }
      rows.push('</tbody></table>');
      if (r.prices.some((p) => p.approx)) {
        rows.push('<p class="note">≈: estimated for the model\'s own tokenizer from the o200k count.</p>');
      }
    }
    if (r.tokens.sections.length) {
      rows.push('<table class="sections"><thead><tr><th>Line</th><th>Section</th><th>Tokens</th></tr></thead><tbody>');
      for (const s of r.tokens.sections) {
        rows.push(`<tr><td class="n">${s.line + 1}</td><td>${e('#'.repeat(s.level) + ' ' + s.title)}</td>` +
          `<td class="n">${fmt(s.tokens)}</td></tr>`);
      }
      rows.push('</tbody></table>');
    }
    for (const note of r.tokens.notes) {
      rows.push(`<p class="note">${e(note)}</p>`);
    }
  }
  if (r.workspace) {
    rows.push(`<p>Workspace: ${fmt(r.workspace.files)} agent files, ${fmt(r.workspace.session)} tok/session, ` +
      `${fmt(r.workspace.invoke)} tok on invoke${r.workspace.truncated ? ' (first files only)' : ''}.</p>`);
  }
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>unveil cost</title><style>` +
    'body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);padding:0 1em;line-height:1.4}' +
    'table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid var(--vscode-panel-border,#8884);padding:.2em .6em}' +
    'th{text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}.note{opacity:.8;font-style:italic}' +
    'code{font-family:var(--vscode-editor-font-family)}' +
    `</style></head><body>${rows.join('\n')}</body></html>`;
}

/** Read-only virtual documents: the model view. */
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
