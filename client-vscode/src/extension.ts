// unveil for VS Code: starts the unveil language server (see server.ts for how it is found) and
// adds what LSP has no words for: a status bar item with the active file's token cost and grade,
// a cost table, a "what the model reads" view, "remove all hidden characters", and decorations
// that draw invisible characters.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DocumentSelector, LanguageClient, LanguageClientOptions, RevealOutputChannelOn, State } from 'vscode-languageclient/node';
import { InvisibleDecorations } from './invisible';
import { FILE_REPORT, FileReport, MODEL_VIEW, StatusBar, VirtualDocuments, reportHtml } from './report';
import { LAUNCH_SETTINGS, ServerChoice, ServerProblem, resolveServer } from './server';

const CLIENT_ID = 'unveil';
const FIX_ALL_KIND = 'source.fixAll.unveil';
const RESTART_DELAY_MS = 1000;

/** Markdown agent files, the extension-less rule files and Cursor .mdc rules, on disk or unsaved. */
export const DOCUMENT_SELECTOR: DocumentSelector = [
  { scheme: 'file', language: 'markdown' },
  { scheme: 'untitled', language: 'markdown' },
  { scheme: 'file', pattern: '**/{.cursorrules,.windsurfrules,.clinerules}' },
  { scheme: 'file', pattern: '**/*.mdc' },
];

/** Keys of the "unveil" section the server reads (see unveil.core.config.Settings). */
const SERVER_KEYS = ['select', 'ignore', 'severity', 'prices', 'pricesFile', 'models', 'inlayHints', 'debounceMs',
  'budgets', 'claudeRatio', 'workspaceScan', 'kinds', 'rulesPaths', 'perFileIgnores', 'allow', 'inlineSuppressions'];

let client: LanguageClient | undefined;
let starting: Promise<void> | undefined;
let restartTimer: NodeJS.Timeout | undefined;
let problemShown = false;
let log: vscode.LogOutputChannel;
let status: StatusBar;
let decorations: InvisibleDecorations;
let lastChoice: string | undefined;

/** Public API (used by the extension-host tests). */
export interface UnveilApi {
  client(): LanguageClient | undefined;
  ready(): Promise<void>;
  statusText(): string;
  statusVisible(): boolean;
  lastReport(): FileReport | undefined;
  invisibleRuns(uri: vscode.Uri): Array<{ start: number; end: number; label: string }>;
  serverDescription(): string | undefined;
  /** The HTML of the cost report webview last shown (for the tests). */
  lastReportHtml(): string;
}

function applies(doc: vscode.TextDocument): boolean {
  return vscode.languages.match(DOCUMENT_SELECTOR as vscode.DocumentSelector, doc) > 0;
}

function serverSettings(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('unveil');
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const v = cfg.get(key);
    if (v !== undefined) {
      out[key] = v;
    }
  }
  return out;
}

function notify(level: 'error' | 'warning', message: string, ...actions: string[]): Thenable<string | undefined> {
  const setting = vscode.workspace.getConfiguration('unveil').get<string>('showNotifications', 'onError');
  const show = setting === 'always' || (setting === 'onWarning') || (setting === 'onError' && level === 'error');
  if (!show) {
    return Promise.resolve(undefined);
  }
  return level === 'error' ? vscode.window.showErrorMessage(message, ...actions) : vscode.window.showWarningMessage(message, ...actions);
}

async function start(ctx: vscode.ExtensionContext): Promise<void> {
  const resource = vscode.window.activeTextEditor?.document.uri;
  const choice: ServerChoice | ServerProblem = await resolveServer(ctx, log, resource);
  if ('message' in choice) {
    choice.details.forEach((d) => log.info(d));
    log.error(choice.message);
    lastChoice = undefined;
    if (!problemShown) {
      problemShown = true; // once per session, not per file opened
      // Not awaited: start() (and so api.ready() and every restart) must not wait for a click.
      void notify('error', choice.message, 'Open Settings', 'Show Output').then((pick) => {
        if (pick === 'Open Settings') {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'unveil.');
        } else if (pick === 'Show Output') {
          log.show();
        }
      });
    }
    return;
  }
  problemShown = false;
  lastChoice = choice.description;
  log.info(`starting ${choice.description}`);
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: log,
    traceOutputChannel: log,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    // Workspace Trust: in an untrusted (Restricted Mode) workspace the repository's own
    // .unveil.toml / [tool.unveil] must not configure the scan, so the server ignores them.
    initializationOptions: { unveil: { ...serverSettings(), isolated: !vscode.workspace.isTrusted } },
    synchronize: { configurationSection: 'unveil' },
  };
  const c = new LanguageClient(CLIENT_ID, 'unveil', { run: choice.executable, debug: choice.executable }, clientOptions);
  c.onDidChangeState((e) => {
    if (e.newState === State.Stopped) {
      status.hide();
    }
  });
  client = c;
  try {
    await c.start();
    status.schedule(0);
  } catch (err) {
    log.error(`the unveil server did not start: ${err}`);
    void notify('error', `unveil: the server did not start (${choice.description}). See the unveil output.`, 'Show Output')
      .then((pick) => pick && log.show());
  }
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(2000);
    } catch (err) {
      log.warn(`stopping the server: ${err}`);
    }
    await c.dispose().catch(() => undefined);
  }
}

async function restart(ctx: vscode.ExtensionContext): Promise<void> {
  await starting;
  starting = (async () => {
    await stop();
    await start(ctx);
  })();
  return starting;
}

async function fileReport(uri: vscode.Uri, workspace: boolean): Promise<FileReport | null | undefined> {
  const c = client;
  if (!c || !c.isRunning()) {
    return undefined;
  }
  return c.sendRequest<FileReport | null>(FILE_REPORT, { uri: c.code2ProtocolConverter.asUri(uri), workspace });
}

function activeDocument(): vscode.TextDocument | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  if (!doc || !applies(doc)) {
    void vscode.window.showInformationMessage('unveil: open a markdown agent file first.');
    return undefined;
  }
  return doc;
}

async function removeHiddenCharacters(): Promise<number> {
  const doc = activeDocument();
  if (!doc) {
    return 0;
  }
  const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider', doc.uri, whole, FIX_ALL_KIND) ?? [];
  const action = actions.find((a) => a.kind?.value === FIX_ALL_KIND && a.edit);
  if (!action?.edit) {
    void vscode.window.showInformationMessage('unveil: no hidden characters to remove in this file.');
    return 0;
  }
  const count = action.edit.entries().reduce((n, [, edits]) => n + edits.length, 0);
  const ok = await vscode.workspace.applyEdit(action.edit);
  if (!ok) {
    void vscode.window.showWarningMessage('unveil: the file changed meanwhile; run the command again.');
    return 0;
  }
  return count;
}

async function showModelView(docs: VirtualDocuments): Promise<vscode.TextEditor | undefined> {
  const doc = activeDocument();
  const c = client;
  if (!doc) {
    return undefined;
  }
  if (!c || !c.isRunning()) {
    void vscode.window.showWarningMessage('unveil: the server is not running (see the unveil output).');
    return undefined;
  }
  const result = await c.sendRequest<{ text: string } | null>(MODEL_VIEW, { uri: c.code2ProtocolConverter.asUri(doc.uri) });
  if (!result) {
    return undefined;
  }
  const name = path.basename(doc.uri.path) || 'untitled';
  const uri = vscode.Uri.from({ scheme: VirtualDocuments.scheme, path: `/${name} (what the model reads)`, query: doc.uri.toString() });
  docs.set(uri, result.text);
  let view = await vscode.workspace.openTextDocument(uri);
  // Its own language id: word wrap on by default (package.json configurationDefaults), so decoded
  // payloads are readable without horizontal scrolling.
  view = await vscode.languages.setTextDocumentLanguage(view, 'unveil-model');
  return vscode.window.showTextDocument(view, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
}

let reportPanel: vscode.WebviewPanel | undefined;
let lastReportHtml = '';

/** The cost table, rendered in a webview whose CSP lets nothing load (see reportHtml). */
async function showFileReport(): Promise<vscode.WebviewPanel | undefined> {
  const doc = activeDocument();
  if (!doc) {
    return undefined;
  }
  const workspace = vscode.workspace.getConfiguration('unveil', doc.uri).get<boolean>('workspaceScan', true);
  const report = await fileReport(doc.uri, workspace);
  if (!report) {
    void vscode.window.showWarningMessage('unveil: no report for this file (is the server running? see the unveil output).');
    return undefined;
  }
  const name = path.basename(doc.uri.path) || 'untitled';
  if (!reportPanel) {
    reportPanel = vscode.window.createWebviewPanel('unveil.cost', `unveil cost`, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: false, enableCommandUris: false, enableForms: false, localResourceRoots: [] });
    reportPanel.onDidDispose(() => { reportPanel = undefined; });
  }
  reportPanel.title = `unveil cost · ${name}`;
  lastReportHtml = reportHtml(report, name);
  reportPanel.webview.html = lastReportHtml;
  reportPanel.reveal(vscode.ViewColumn.Beside, true);
  return reportPanel;
}

export async function activate(ctx: vscode.ExtensionContext): Promise<UnveilApi> {
  log = vscode.window.createOutputChannel('unveil', { log: true });
  status = new StatusBar(fileReport, applies);
  decorations = new InvisibleDecorations(applies);
  const docs = new VirtualDocuments();
  ctx.subscriptions.push(
    log, status, decorations,
    vscode.workspace.registerTextDocumentContentProvider(VirtualDocuments.scheme, docs),
    vscode.commands.registerCommand('unveil.restart', () => restart(ctx)),
    vscode.commands.registerCommand('unveil.showOutput', () => log.show()),
    vscode.commands.registerCommand('unveil.removeHiddenCharacters', removeHiddenCharacters),
    vscode.commands.registerCommand('unveil.showModelView', () => showModelView(docs)),
    vscode.commands.registerCommand('unveil.showFileReport', () => showFileReport()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (LAUNCH_SETTINGS.some((s) => e.affectsConfiguration(s))) {
        clearTimeout(restartTimer);
        restartTimer = setTimeout(() => void restart(ctx), RESTART_DELAY_MS);
      }
    }),
  );
  const python = vscode.extensions.getExtension('ms-python.python');
  if (python) {
    // Restart when the selected interpreter changes (only matters when unveil.interpreter is empty).
    void Promise.resolve(python.isActive ? python.exports : python.activate()).then((api: any) => {
      const ev = api?.environments?.onDidChangeActiveEnvironmentPath;
      if (typeof ev === 'function') {
        ctx.subscriptions.push(ev(() => {
          const cfg = vscode.workspace.getConfiguration('unveil');
          if (!(cfg.get<string[]>('path') ?? []).length && !(cfg.get<string[]>('interpreter') ?? []).length) {
            clearTimeout(restartTimer);
            restartTimer = setTimeout(() => void restart(ctx), RESTART_DELAY_MS);
          }
        }));
      }
    }, () => undefined);
  }
  starting = start(ctx);
  return {
    client: () => client,
    ready: async () => { await starting; },
    statusText: () => status.item.text,
    statusVisible: () => !!status.last && !!status.item.text,
    lastReport: () => status.last,
    invisibleRuns: (uri) => decorations.shown.get(uri.toString()) ?? [],
    serverDescription: () => lastChoice,
    lastReportHtml: () => lastReportHtml,
  };
}

export async function deactivate(): Promise<void> {
  clearTimeout(restartTimer);
  await stop();
}
