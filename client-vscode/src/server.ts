// How to start the unveil language server: the `unveil.path` command, else a Python interpreter
// (unveil.interpreter, then the Python extension's choice, then python3/python on the PATH)
// running bundled/tool/lsp_server.py, which imports unveil from bundled/libs or the
// interpreter's environment according to `unveil.importStrategy`.
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { Executable } from 'vscode-languageclient/node';

export interface ServerChoice {
  /** What to run. */
  executable: Executable;
  /** One line for the output channel, e.g. "bundled server with /usr/bin/python3 (unveil 0.1.0)". */
  description: string;
}

export interface ServerProblem {
  /** Shown once to the user. */
  message: string;
  /** Details for the output channel. */
  details: string[];
}

const PROBE_TIMEOUT_MS = 20000;

/** Settings that need a new server process when they change. */
export const LAUNCH_SETTINGS = ['unveil.path', 'unveil.interpreter', 'unveil.importStrategy'];

function strings(value: unknown): string[] {
  if (typeof value === 'string') {
    return value.trim() ? [value.trim()] : [];
  }
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.length > 0) : [];
}

/** `${workspaceFolder}`, `${userHome}` and `${env:NAME}` in a setting value. */
export function substitute(value: string, folder: vscode.WorkspaceFolder | undefined): string {
  const home = process.env.HOME ?? process.env.USERPROFILE ?? '';
  return value
    .replace(/\$\{workspaceFolder\}/g, folder?.uri.fsPath ?? '')
    .replace(/\$\{userHome\}/g, home)
    .replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => process.env[name] ?? '');
}

/** The interpreter the Python extension (ms-python.python) has selected, if it is installed. */
async function pythonExtensionInterpreter(resource: vscode.Uri | undefined, log: vscode.LogOutputChannel): Promise<string[]> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) {
    return [];
  }
  try {
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const envs = api?.environments;
    if (envs?.getActiveEnvironmentPath && envs?.resolveEnvironment) {
      const active = envs.getActiveEnvironmentPath(resource);
      const env = await envs.resolveEnvironment(active);
      const exe: string | undefined = env?.executable?.uri?.fsPath ?? env?.path;
      if (exe) {
        return [exe];
      }
    }
    // Older API.
    const details = api?.settings?.getExecutionDetails?.(resource);
    return strings(details?.execCommand);
  } catch (err) {
    log.warn(`Python extension API failed: ${err}`);
    return [];
  }
}

interface ProbeResult {
  ok: boolean;
  output: string;
}

/** Run `<python> lsp_server.py --probe`: imports unveil as the server would and prints versions. */
function probe(command: string[], script: string, env: NodeJS.ProcessEnv): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(command[0], [...command.slice(1), script, '--probe'], { env, timeout: PROBE_TIMEOUT_MS, windowsHide: true },
      (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`.trim();
        resolve({ ok: !error && /^unveil /m.test(stdout), output: output || String(error ?? '') });
      });
  });
}

/**
 * Choose the server for `resource`'s workspace folder. Returns a problem (never throws) when no
 * usable Python is found; the caller shows it once.
 */
export async function resolveServer(ctx: vscode.ExtensionContext, log: vscode.LogOutputChannel,
  resource?: vscode.Uri): Promise<ServerChoice | ServerProblem> {
  const folder = resource ? vscode.workspace.getWorkspaceFolder(resource) : vscode.workspace.workspaceFolders?.[0];
  const cfg = vscode.workspace.getConfiguration('unveil', folder?.uri ?? resource);
  const cwd = folder?.uri.fsPath;

  const path = strings(cfg.get('path')).map((p) => substitute(p, folder));
  if (path.length) {
    return {
      executable: { command: path[0], args: path.slice(1), options: { cwd, env: { ...process.env } } },
      description: `unveil.path: ${path.join(' ')}`,
    };
  }

  const strategy = cfg.get<string>('importStrategy', 'useBundled') === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled';
  const script = ctx.asAbsolutePath('bundled/tool/lsp_server.py');
  const env = { ...process.env, LS_IMPORT_STRATEGY: strategy, PYTHONIOENCODING: 'utf-8' };
  const candidates: Array<{ command: string[]; from: string }> = [];
  const explicit = strings(cfg.get('interpreter')).map((p) => substitute(p, folder));
  if (explicit.length) {
    candidates.push({ command: explicit, from: 'unveil.interpreter' });
  } else {
    const fromExt = await pythonExtensionInterpreter(folder?.uri ?? resource, log);
    if (fromExt.length) {
      candidates.push({ command: fromExt, from: 'the Python extension' });
    }
    for (const name of process.platform === 'win32' ? ['py', 'python', 'python3'] : ['python3', 'python']) {
      candidates.push({ command: [name], from: 'PATH' });
    }
  }

  const details: string[] = [];
  for (const c of candidates) {
    const r = await probe(c.command, script, env);
    details.push(`${c.command.join(' ')} (from ${c.from}): ${r.ok ? 'ok' : 'unusable'}: ${r.output}`);
    if (r.ok) {
      return {
        executable: { command: c.command[0], args: [...c.command.slice(1), script], options: { cwd, env } },
        description: `${r.output.split('\n')[0]} · interpreter ${c.command.join(' ')} from ${c.from} · importStrategy ${strategy}`,
      };
    }
    if (c.from === 'unveil.interpreter') {
      break; // the user chose this one: say why it does not work rather than silently using another
    }
  }
  const message = explicit.length
    ? `unveil: the interpreter in "unveil.interpreter" (${explicit.join(' ')}) cannot run the unveil server. ` +
      'It needs Python 3.10 or later; see the unveil output for the reason.'
    : 'unveil: no usable Python found. The unveil server needs Python 3.10 or later: install it, ' +
      'select it with the Python extension or set "unveil.interpreter", or set "unveil.path" to an installed ' +
      'server, e.g. ["unveil", "serve"] after "pipx install unveil".';
  return { message, details };
}
