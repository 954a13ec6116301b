// Extension integration tests, run inside code-server's real (Node) extension host with the
// extension under development (editor-testing.md §4.6). The driver (../exthost-driver.js) loads
// this module through the workbench's extensionTestsPath; run() resolving = pass, throwing = fail.
// Expected values come from UNVEIL_E2E_EXPECT (JSON written by ../expect.py from the server code).
const assert = require('node:assert/strict');
const vscode = require('vscode');

const EXPECT = JSON.parse(process.env.UNVEIL_E2E_EXPECT || '{}');
const results = [];

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

/** Poll `fn` until it returns a truthy value (or the time runs out: then throw `what`). */
async function waitFor(what, fn, timeoutMs = 30000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what} (last: ${last && last.stack ? last.stack : JSON.stringify(last)})`);
}

async function test(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`PASS exthost: ${name} (${Date.now() - t0} ms)`);
  } catch (err) {
    results.push({ name, ok: false });
    console.log(`FAIL exthost: ${name}: ${err && err.stack ? err.stack : err}`);
  }
}

const codes = (uri) => vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'unveil')
  .map((d) => `${typeof d.code === 'object' ? d.code.value : d.code}@${d.range.start.line}:${d.range.start.character}`).sort();
const expectedCodes = (file) => file.diagnostics.map((f) => `${f.rule}@${f.start[0]}:${f.start[1]}`).sort();

async function open(file) {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file.path));
  await vscode.window.showTextDocument(doc, { preview: false });
  return doc;
}

async function setting(key, value) {
  await vscode.workspace.getConfiguration('unveil').update(key, value, vscode.ConfigurationTarget.Workspace);
}

exports.run = async function run() {
  const bad = EXPECT.malicious;
  const good = EXPECT.benign;
  assert.ok(bad && good, 'UNVEIL_E2E_EXPECT is missing');
  const ext = vscode.extensions.getExtension('unveil.unveil');
  assert.ok(ext, 'extension unveil.unveil is not installed');

  const badDoc = await open(bad);
  const api = await waitFor('activation', () => ext.isActive && ext.exports);
  await api.ready();

  await test('server starts with the bundled libraries through the Python shim', async () => {
    const desc = api.serverDescription();
    assert.ok(desc, 'no server was started');
    assert.match(desc, /^unveil \d+\.\d+\.\d+ \(Python 3\.\d+, .*bundled[/\\]libs[/\\]common\)/);
    assert.match(desc, /importStrategy useBundled/);
    assert.ok(api.client().isRunning());
  });

  await test('diagnostics of the malicious SKILL.md equal the server findings', async () => {
    await waitFor('diagnostics', () => codes(badDoc.uri).length === bad.diagnostics.length);
    assert.deepEqual(codes(badDoc.uri), expectedCodes(bad));
    const hid = vscode.languages.getDiagnostics(badDoc.uri).find((d) => d.code && (d.code.value || d.code) === 'HID001');
    assert.equal(hid.severity, vscode.DiagnosticSeverity.Error);
    const f = bad.findings.find((x) => x.rule === 'HID001');
    assert.deepEqual([hid.range.end.line, hid.range.end.character], f.end);
  });

  await test('hover on the hidden run reveals the decoded instruction', async () => {
    const f = bad.findings.find((x) => x.rule === 'HID001');
    const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', badDoc.uri,
      new vscode.Position(f.start[0], f.start[1] + 2));
    const text = hovers.flatMap((h) => h.contents.map((c) => c.value || String(c))).join('\n');
    assert.match(text, /\*\*HID001\*\*/);
    assert.ok(text.includes('open -a Calculator'), text);
  });

  await test('inlay hints show the token counts', async () => {
    const end = badDoc.lineAt(badDoc.lineCount - 1).range.end;
    const hints = await waitFor('inlay hints', async () => {
      const h = await vscode.commands.executeCommand('vscode.executeInlayHintProvider', badDoc.uri, new vscode.Range(0, 0, end.line, end.character));
      return h && h.length ? h : undefined;
    });
    const labels = hints.map((h) => (typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join('')));
    assert.deepEqual(labels, bad.hints);
  });

  await test('decorations draw the invisible characters', async () => {
    const runs = await waitFor('decorations', () => api.invisibleRuns(badDoc.uri).length && api.invisibleRuns(badDoc.uri));
    const labels = runs.map((r) => r.label);
    assert.equal(labels.length, 3, JSON.stringify(labels));
    assert.equal(labels[0], 'U+E0001');
    assert.ok(labels[1].startsWith('TAGS "## Prerequisites**IMPORTANT:**'), labels[1]);
    assert.equal(labels[2], 'U+E007F');
  });

  await test('status bar shows tokens per session, grade and workspace total', async () => {
    const want = `$(eye) unveil ${bad.grade} · ${bad.session.toLocaleString('en-US')} tok/session · workspace ${EXPECT.workspace_status} tok/session`;
    await waitFor(`status "${want}"`, () => api.statusText() === want);
    assert.equal(api.lastReport().workspace.files, EXPECT.locked ? 4 : 3);
  });

  await test('unveil.showModelView opens what the model reads', async () => {
    const editor = await vscode.commands.executeCommand('unveil.showModelView');
    assert.ok(editor, 'no editor returned');
    const text = editor.document.getText();
    assert.equal(editor.document.uri.scheme, 'unveil');
    assert.equal(editor.document.languageId, 'unveil-model');
    assert.equal(vscode.workspace.getConfiguration('editor', { languageId: 'unveil-model' }).get('wordWrap'), 'on');
    assert.ok(text.includes('⟨U+E0001 LANGUAGE TAG⟩⟨TAGS "## Prerequisites**IMPORTANT:**'), text.slice(0, 600));
    assert.ok(text.includes('⟨U+E007F CANCEL TAG⟩'));
    assert.ok(text.includes('HID001 at 8:1 · error'));
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    await vscode.window.showTextDocument(badDoc);
  });

  await test('unveil.showFileReport opens the cost table rendered, nothing loadable', async () => {
    const panel = await vscode.commands.executeCommand('unveil.showFileReport');
    assert.ok(panel && panel.webview, 'no webview panel returned');
    assert.equal(panel.webview.options.enableScripts, false);
    const html = api.lastReportHtml();
    assert.ok(html.includes(`grade <strong>${bad.grade}</strong>`), html.slice(0, 400));
    assert.ok(html.includes(`<strong>${bad.session.toLocaleString('en-US')} tok/session · ${bad.invoke.toLocaleString('en-US')} tok on invoke</strong>`), html.slice(0, 600));
    assert.match(html, /<th>Model<\/th><th>USD per M input tok<\/th><th>per session<\/th>/);
    assert.match(html, /<th>Line<\/th><th>Section<\/th><th>Tokens<\/th>/);
    assert.ok(html.includes(`content="default-src 'none'; style-src 'unsafe-inline'"`));
    assert.ok(!/<img|<script|<a |src=/i.test(html), 'the report must not contain loadable elements');
    panel.dispose();
    await vscode.window.showTextDocument(badDoc);
  });

  await test('setting unveil.ignore reaches the server; unveil.inlayHints=false removes hints', async () => {
    await setting('ignore', ['HID001']);
    await waitFor('HID001 ignored', () => !codes(badDoc.uri).some((c) => c.startsWith('HID001')) && codes(badDoc.uri).length > 0);
    await setting('inlayHints', false);
    await waitFor('no inlay hints', async () => {
      const h = await vscode.commands.executeCommand('vscode.executeInlayHintProvider', badDoc.uri, new vscode.Range(0, 0, badDoc.lineCount, 0));
      return h && h.length === 0;
    });
    await setting('ignore', undefined);
    await setting('inlayHints', undefined);
    await waitFor('HID001 back', () => codes(badDoc.uri).some((c) => c.startsWith('HID001')));
  });

  await test('unveil.removeHiddenCharacters applies source.fixAll.unveil', async () => {
    await vscode.window.showTextDocument(badDoc);
    const n = await vscode.commands.executeCommand('unveil.removeHiddenCharacters');
    assert.equal(n, 1);
    assert.ok(!/[\u{E0000}-\u{E007F}]/u.test(badDoc.getText()), 'tag characters left');
    await waitFor('HID001 gone', () => !codes(badDoc.uri).some((c) => c.startsWith('HID001')));
    await vscode.commands.executeCommand('workbench.action.files.revert');
    await waitFor('HID001 back after revert', () => codes(badDoc.uri).some((c) => c.startsWith('HID001')));
  });

  await test('unveil.restart starts a new server that publishes again', async () => {
    const before = api.client();
    await vscode.commands.executeCommand('unveil.restart');
    await api.ready();
    const after = api.client();
    assert.ok(after && after !== before && after.isRunning());
    await waitFor('diagnostics after restart', () => codes(badDoc.uri).length === bad.diagnostics.length);
    assert.deepEqual(codes(badDoc.uri), expectedCodes(bad));
  });

  await test('benign CLAUDE.md: no errors, status grade A', async () => {
    const goodDoc = await open(good);
    await waitFor(`status grade ${good.grade}`, () => api.statusText().startsWith(`$(eye) unveil ${good.grade} · ${good.session.toLocaleString('en-US')} tok/session`));
    assert.deepEqual(codes(goodDoc.uri), expectedCodes(good));
  });

  await test('unveil.showOutput runs', async () => {
    await vscode.commands.executeCommand('unveil.showOutput');
  });

  const failed = results.filter((r) => !r.ok).length;
  console.log(`exthost: ${results.length - failed} passed, ${failed} failed`);
  if (failed) {
    throw new Error(`${failed} extension-host test(s) failed`);
  }
};
