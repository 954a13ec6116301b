// Drive code-server (real VS Code workbench) in Debian's chromium with playwright-core.
//
//   node driver.js ui       URL   # UI checks on the installed .vsix; screenshots in $ARTIFACTS
//   node driver.js exthost  URL   # extension-host tests (exthost/index.js) via the workbench payload
//
// Env: UNVEIL_E2E_EXPECT (JSON from expect.py), ARTIFACTS (screenshot folder), EXT_DEV (the
// extension folder, exthost mode), CHROMIUM (default /usr/bin/chromium). Prints one PASS/FAIL
// line per check and exits 1 when any fails. Recipes: editor-testing.md §4.5 and §4.6.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const [mode, base] = process.argv.slice(2);
const EXPECT = JSON.parse(process.env.UNVEIL_E2E_EXPECT || '{}');
const ARTIFACTS = process.env.ARTIFACTS || path.join(__dirname, 'artifacts');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const results = [];

function record(name, ok, detail) {
  results.push({ name, ok });
  console.log(`${ok ? 'PASS' : 'FAIL'} ${mode}: ${name}${detail ? ` — ${detail}` : ''}`);
}

async function check(name, fn) {
  try {
    const detail = await fn();
    record(name, true, detail);
  } catch (err) {
    record(name, false, String(err && err.message ? err.message : err).split('\n')[0]);
  }
}

async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chromium-profile-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 850 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests'],
  });
  return { ctx, profile };
}

async function openFile(page, name, folderHint) {
  await page.keyboard.press('Escape');
  await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } }).catch(() => undefined);
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
  await page.keyboard.type(folderHint ? `${folderHint}/${name}` : name);
  // the row of that folder's file: right after typing, the list can still hold another file of
  // the same name (a recently opened one), and clicking it opened the wrong AGENTS.md
  let rows = page.locator('.quick-input-list .monaco-list-row', { hasText: name });
  if (folderHint) rows = rows.filter({ hasText: folderHint });
  const row = rows.first();
  await row.waitFor({ timeout: 15000 });
  await row.click();
  await page.waitForSelector(`.tab.active:has-text("${name}")`, { timeout: 15000 });
}

async function ui(page) {
  const bad = EXPECT.malicious;
  const good = EXPECT.benign;
  await page.goto(`${base}/?folder=${encodeURIComponent(EXPECT.work)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 60000 });

  await openFile(page, bad.name, 'testing-guidelines');
  const editor = page.locator('.editor-instance .monaco-editor').first();
  await check('error squiggle on the hidden instruction', async () => {
    await editor.locator('.squiggly-error').first().waitFor({ timeout: 60000 });
  });
  await check('inlay hint with the token counts', async () => {
    const want = bad.hints[0].replace(/\u00a0/g, ' ');
    await page.waitForFunction((w) => {
      const el = document.querySelector('.editor-instance .monaco-editor .view-lines');
      return !!el && el.textContent.replace(/\u00a0/g, ' ').includes(w);
    }, want, { timeout: 30000 });
    return want;
  });
  await check('status bar text', async () => {
    const want = `unveil ${bad.grade} · ${bad.session.toLocaleString('en-US')} tok/session · workspace ${EXPECT.workspace_status} tok/session`;
    const item = page.locator('.statusbar-item', { hasText: 'tok/session' }).first();
    await page.waitForFunction((w) => [...document.querySelectorAll('.statusbar-item')]
      .some((e) => e.textContent.replace(/\s+/g, ' ').includes(w)), want, { timeout: 30000 });
    return (await item.textContent()).trim();
  });
  await page.screenshot({ path: path.join(ARTIFACTS, '1-editor-squiggle-inlay-status.png') });

  await check('hover reveals the decoded instruction', async () => {
    await editor.locator('.squiggly-error').first().hover({ force: true });
    await editor.locator('.squiggly-error').first().click({ force: true });
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    const hover = page.locator('.monaco-hover', { hasText: 'HID001' }).first();
    await hover.waitFor({ timeout: 15000 });
    const text = await hover.textContent();
    if (!text.includes('open -a Calculator')) throw new Error(`hover text: ${text.slice(0, 200)}`);
    return text.slice(0, 60).replace(/\s+/g, ' ');
  });
  await page.screenshot({ path: path.join(ARTIFACTS, '2-hover.png') });
  await page.keyboard.press('Escape');

  await check('Problems panel lists the findings', async () => {
    await page.keyboard.press('Control+Shift+M');
    const panel = page.locator('.markers-panel');
    await panel.waitFor({ timeout: 15000 });
    for (const f of bad.diagnostics) {
      await panel.locator('.monaco-list-row', { hasText: f.rule }).first().waitFor({ timeout: 15000 });
    }
    const rows = await panel.locator('.monaco-list-row').allTextContents();
    return rows.filter((r) => /HID|AGY/.test(r)).map((r) => r.replace(/\s+/g, ' ').slice(0, 80)).join(' | ');
  });
  await page.screenshot({ path: path.join(ARTIFACTS, '3-problems.png') });

  await check('quick fix removes the hidden characters', async () => {
    const hid = bad.findings.find((f) => f.rule === 'HID001');
    await editor.locator('.squiggly-error').first().click({ force: true });
    await page.keyboard.press('Control+.');
    const item = page.locator('.action-widget .monaco-list-row', { hasText: hid.fixes[0] }).first();
    await item.waitFor({ timeout: 15000 });
    await page.screenshot({ path: path.join(ARTIFACTS, '4-quick-fix-menu.png') });
    // The preferred fix is focused; Enter applies it (a mouse click races the menu's layout).
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('.editor-instance .monaco-editor .squiggly-error'), null, { timeout: 30000 });
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'HID001' }).first().waitFor({ state: 'detached', timeout: 15000 });
  });
  await page.screenshot({ path: path.join(ARTIFACTS, '5-after-quick-fix.png') });

  await check('benign CLAUDE.md: no error, token hint', async () => {
    await openFile(page, good.name);
    await page.waitForFunction((w) => {
      const el = document.querySelector('.editor-instance .monaco-editor .view-lines');
      return !!el && el.textContent.replace(/\u00a0/g, ' ').includes(w);
    }, good.hints[0].replace(/\u00a0/g, ' '), { timeout: 30000 });
    if (await page.locator('.editor-instance .monaco-editor .squiggly-error').count()) throw new Error('error squiggle on a benign file');
    return good.hints[0];
  });
  await page.screenshot({ path: path.join(ARTIFACTS, '6-benign.png') });

  if (EXPECT.locked) {
    await check('changed locked file: "Changed since review" on line 1', async () => {
      await openFile(page, EXPECT.locked.name, 'reviewed');
      await page.keyboard.press('Control+Shift+M');
      const want = EXPECT.locked.message.split(':')[0]; // "Changed since review (2026-…, no commit)"
      const row = page.locator('.markers-panel .monaco-list-row', { hasText: want }).first();
      await row.waitFor({ timeout: 30000 });
      const text = (await row.textContent()).replace(/\s+/g, ' ');
      if (!text.includes('[Ln 1, Col 1]')) throw new Error(`not on line 1: ${text.slice(0, 160)}`);
      return text.slice(0, 120);
    });
    await page.screenshot({ path: path.join(ARTIFACTS, '7-changed-since-review.png') });
  }

  await hostile(page);
  await narrow(page);
}

/** Put the cursor at 0-based (line, UTF-16 character) with "Go to Line/Column". */
async function goTo(page, line, character) {
  await page.keyboard.press('Control+G');
  await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
  await page.keyboard.type(`${line + 1}:${character + 1}`);
  await page.keyboard.press('Enter');
}

/** Hover every finding of a hostile file (hidden images, links and HTML pointing at a beacon
 * host) while recording every request the browser makes: none may leave the machine. */
async function hostile(page) {
  const file = EXPECT.hostile;
  const outside = [];
  const handler = (route) => {
    const u = new URL(route.request().url());
    if (['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname) || u.protocol === 'data:' || u.protocol === 'blob:') {
      return route.continue();
    }
    outside.push(u.href);
    return route.abort();
  };
  await page.context().route('**/*', handler);
  await openFile(page, file.name, 'hostile');
  const editor = page.locator('.editor-instance .monaco-editor').first();
  await check('hostile file: every hover is inert, no request leaves the machine', async () => {
    await editor.locator('.squiggly-error').first().waitFor({ timeout: 60000 });
    let shown = 0;
    for (const f of file.findings) {
      await editor.click({ position: { x: 200, y: 20 } }).catch(() => undefined);
      await goTo(page, f.start[0], f.start[1]);
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      const hover = page.locator('.monaco-hover', { hasText: f.rule }).first();
      await hover.waitFor({ timeout: 15000 });
      if (await hover.locator('img, a[href^="http"]').count()) throw new Error(`live image or link in the hover of ${f.rule}`);
      if (!shown++) await page.screenshot({ path: path.join(ARTIFACTS, '8-hostile-hover.png') });
      await page.keyboard.press('Escape');
    }
    await page.waitForTimeout(1000); // a late image load would show up here
    if (outside.length) throw new Error(`requests left the machine: ${outside.join(', ')}`);
    return `${shown} hovers, 0 outside requests (beacon ${EXPECT.beacon})`;
  });
  await page.context().unroute('**/*', handler);
}

/** A narrow window with word wrap on: each inlay hint label stays whole on one line. */
async function narrow(page) {
  // the hostile AGENTS.md is still the active editor (hostile() above): its line 1 "# Agent notes"
  // and the summary hint do not fit in about 45 columns together, so the hint must move whole
  const file = EXPECT.hostile;
  await page.setViewportSize({ width: 840, height: 850 }); // a narrow editor: about 45 columns of text
  await check('narrow editor: inlay hint labels are short and never split', async () => {
    const want = file.hints[0].replace(/\u00a0/g, ' ');
    if (want.length > 43) throw new Error(`label longer than VS Code's 43-character cut: ${want}`);
    await page.waitForFunction((w) => [...document.querySelectorAll('.editor-instance .monaco-editor .view-line')]
      .some((el) => el.textContent.replace(/\u00a0/g, ' ').includes(w)), want, { timeout: 30000 });
    return want;
  });
  await page.screenshot({ path: path.join(ARTIFACTS, '9-narrow-inlay-hint.png') });
  await page.setViewportSize({ width: 1400, height: 850 });
}

async function exthost(page) {
  const u = new URL(base);
  const remote = (p) => `vscode-remote://${u.host}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(process.env.EXT_DEV)],
    ['extensionTestsPath', remote(path.join(__dirname, 'exthost', 'index.js'))],
    ['skipWelcome', 'true'],
  ];
  let resolveExit;
  const exited = new Promise((r) => { resolveExit = r; });
  await page.exposeFunction('codeAutomationExit', (code) => resolveExit(code));
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    for (const a of args || []) {
      const s = typeof a === 'string' ? a : JSON.stringify(a);
      if (/^(PASS|FAIL) exthost|^exthost:|Error/.test(s)) console.log(s);
    }
  });
  // A built workbench honours the payload only with enableSmokeTestDriver (VS Code >= 1.10x).
  await page.route((url) => new URL(url).pathname === '/', async (route) => {
    const resp = await route.fetch();
    const body = (await resp.text()).replace('&quot;developmentOptions&quot;:{',
      '&quot;developmentOptions&quot;:{&quot;enableSmokeTestDriver&quot;:true,');
    await route.fulfill({ response: resp, body });
  });
  await page.goto(`${base}/?folder=${encodeURIComponent(EXPECT.work)}&payload=${encodeURIComponent(JSON.stringify(payload))}`);
  const timeout = new Promise((r) => setTimeout(() => r('timeout'), 420000));
  const code = await Promise.race([exited, timeout]);
  await page.screenshot({ path: path.join(ARTIFACTS, '7-extension-development-host.png') }).catch(() => undefined);
  record('extension-host tests exit code', code === 0, `exit ${code}`);
}

(async () => {
  const { ctx, profile } = await launch();
  const page = ctx.pages()[0] || await ctx.newPage();
  try {
    if (mode === 'ui') await ui(page);
    else if (mode === 'exthost') await exthost(page);
    else throw new Error(`unknown mode ${mode}`);
  } catch (err) {
    record('driver', false, err && err.stack ? err.stack : String(err));
    await page.screenshot({ path: path.join(ARTIFACTS, `failure-${mode}.png`) }).catch(() => undefined);
  } finally {
    await ctx.close().catch(() => undefined);
    fs.rmSync(profile, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${mode}: ${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
