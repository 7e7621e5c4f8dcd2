import * as vscode from 'vscode';
import * as cp from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import {
  LanguageClient, LanguageClientOptions, ServerOptions, State, ProgressType,
} from 'vscode-languageclient/node';
import {
  AnswerHistory, AskParams, AskResult, AskSession, Citation, StatusResult, buildAskParams,
  citationQuickPickItems, citationSelection, citedForLenses, findRoot, keepServerLens, renderAnswerHtml,
  renderPendingHtml, serverCommand, settingsToInitOptions, statusBarText, whichExecutable,
} from './logic';
import { AnswerPanel, PanelOpen } from './panel';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let statusItem: vscode.StatusBarItem;
let statusTimer: NodeJS.Timeout | undefined;
let panel: AnswerPanel;
/** The answer on screen (the panel's), and the question of the server's last answer. */
let shown: { question: string; result: AskResult } | undefined;
let serverLast: string | undefined;
let running: { session: AskSession; cancel: vscode.CancellationTokenSource } | undefined;
let seq = 0;
/** Marks a client's server process as stopped on request (its exit is then no error). */
const stops = new WeakMap<LanguageClient, () => void>();
let rootUri: vscode.Uri | undefined;
let state: vscode.Memento | undefined;
const history = new AnswerHistory(20);
const HISTORY_KEY = 'coderag.history';
const anyProgress = new ProgressType<any>();
let highlight: vscode.TextEditorDecorationType;
const lensesChanged = new vscode.EventEmitter<void>();
/** Closes the "could not start" notification (the server started, or the user closed it). */
let startFailure: { close: () => void } | undefined;
/** A question answered while the index was being built: asked again when indexing ends. */
let reask: { question: string; params: object; send: (p: object, t: vscode.CancellationToken) => Promise<unknown> } | undefined;
let lastState: string | undefined;
/** A "restart the server?" prompt is showing. */
let restartPrompt = false;
/** Set by "Re-index Workspace" until the server's next indexing progress ends. */
let reindex: { report?: (m: string) => void; done?: (m: string) => void } | undefined;

function setting(key: string): unknown {
  return vscode.workspace.getConfiguration('coderag').get(key);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  highlight = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.findMatchForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });
  // One output channel for the extension's life: a restarted client writes to the same one.
  output = vscode.window.createOutputChannel('CodeRAG');
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  statusItem.command = 'coderag.askQuestion';
  panel = new AnswerPanel(openFromPanel);
  state = context.workspaceState;
  history.load(state.get(HISTORY_KEY));
  context.subscriptions.push(highlight, statusItem, output, lensesChanged);

  context.subscriptions.push(
    vscode.commands.registerCommand('coderag.askQuestion', askQuestion),
    vscode.commands.registerCommand('coderag.showCitations', showCitations),
    vscode.commands.registerCommand('coderag.askFollowup', () => askQuestion(undefined, true)),
    vscode.commands.registerCommand('coderag.showHistory', showHistory),
    vscode.commands.registerCommand('coderag.showContext', () => {
      if (!shown) { vscode.window.showInformationMessage('CodeRAG: no answer yet.'); return; }
      showAnswer(shown.question, shown.result, true);
    }),
    vscode.commands.registerCommand('coderag.cancel', () => running?.cancel.cancel()),
    vscode.commands.registerCommand('coderag.openCitation', (c: Citation | number) =>
      openCitation(typeof c === 'number' ? shown?.result.citations[c] : c)),
    // "cited for" lenses of an answer from the history (the server's cover its last answer).
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, {
      onDidChangeCodeLenses: lensesChanged.event,
      provideCodeLenses: (doc) => citedForLenses(shown, serverLast, (u) => sameUri(u, doc.uri)).map((l) =>
        new vscode.CodeLens(new vscode.Range(l.line, 0, l.line, 0), { title: l.title, command: '' })),
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('coderag.server') || e.affectsConfiguration('coderag.llm') ||
          e.affectsConfiguration('coderag.embed') || e.affectsConfiguration('coderag.indexDir') ||
          e.affectsConfiguration('coderag.exclude')) {
        // A server that is not running has nothing to lose: start it with the new settings.
        // One prompt at a time (the Settings UI saves as one types); its answer takes the
        // settings as they are then.
        if (client && restartPrompt) return;
        let choice: string | undefined = 'Restart';
        if (client) {
          restartPrompt = true;
          try {
            choice = await vscode.window.showInformationMessage('CodeRAG settings changed: restart the server?', 'Restart');
          } finally {
            restartPrompt = false;
          }
        }
        if (choice === 'Restart') { await stopClient(); await startClient(context); }
      }
    }),
    { dispose: () => { void stopClient(); } },
  );
  await startClient(context);
}

function sameUri(a: string, b: vscode.Uri): boolean {
  try { return vscode.Uri.parse(a).toString() === b.toString(); } catch { return false; }
}

/** One notification for a server that cannot start, closed when it starts (or by the user). */
function showStartFailure(message: string): void {
  startFailure?.close();
  let close: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => { close = resolve; });
  startFailure = { close };
  void vscode.window.withProgress({
    location: vscode.ProgressLocation.Notification, title: 'CodeRAG', cancellable: true,
  }, (progress, token) => {
    progress.report({ message });
    token.onCancellationRequested(close);
    return closed;
  });
  output.appendLine(`[error] ${message}`);
}

/**
 * The server a platform-specific .vsix carries (scripts/package.sh): server/coderag beside the
 * FAISS module and the model, made executable if the unpacking lost the bit. Undefined without.
 */
function bundledServer(context: vscode.ExtensionContext): string | undefined {
  const p = path.join(context.extensionPath, 'server', 'coderag');
  try {
    if (!fs.statSync(p).isFile()) return undefined;
    try { fs.accessSync(p, fs.constants.X_OK); } catch { fs.chmodSync(p, 0o755); }
    return p;
  } catch {
    return undefined;
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const { command, args } = serverCommand(setting, bundledServer(context));
  renderStatus({ state: 'indexing', indexed: 0, total: 0 });
  statusItem.show();
  // Checked before the client exists, so a missing binary gives one notification (ours) and
  // not also vscode-languageclient's.
  if (!whichExecutable(command, process.env.PATH || '')) {
    showStartFailure(`could not start "${command} ${args.join(' ')}": no such executable. ` +
      'Set coderag.server.path to the coderag binary; this closes when the server starts.');
    renderStatus(undefined);
    return;
  }
  // The server process is ours: a stop we asked for is an info line, not an error.
  let stopping = false;
  const serverOptions: ServerOptions = () => new Promise((resolve, reject) => {
    const proc = cp.spawn(command, args, { env: process.env, stdio: 'pipe' });
    proc.once('error', reject);
    proc.once('spawn', () => resolve(proc));
    proc.once('exit', (code, signal) => {
      if (stopping || code === 0) output.appendLine('[info] the server stopped');
      else output.appendLine(`[error] the server exited (${signal || `code ${code}`})`);
    });
  });
  // The root rule: the workspace folder's VCS or project root when it has one above it.
  const folder = vscode.workspace.workspaceFolders?.[0];
  let workspaceFolder: vscode.WorkspaceFolder | undefined;
  rootUri = folder?.uri;
  if (folder && folder.uri.scheme === 'file') {
    const { root } = findRoot(folder.uri.fsPath, folder.uri.fsPath);
    if (root !== folder.uri.fsPath) {
      workspaceFolder = { uri: vscode.Uri.file(root), name: root.split('/').pop() || root, index: 0 };
      rootUri = workspaceFolder.uri;
    }
  }
  const clientOptions: LanguageClientOptions = {
    documentSelector: ['python', 'c', 'cpp', 'go', 'rust', 'java', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact'].map((language) => ({ scheme: 'file', language })),
    workspaceFolder,
    // The server registers its own file watchers, one per extension it indexes (dynamic registration).
    initializationOptions: settingsToInitOptions(setting),
    outputChannel: output,
    middleware: {
      executeCommand: async (cmd, cmdArgs, next) => {
        if (cmd === 'coderag.reindex') return runReindex(() => next(cmd, cmdArgs));
        // The server's "Ask CodeRAG" code lens runs coderag.ask on the server:
        // show what it answers in the answer panel.
        if (cmd !== 'coderag.ask' && cmd !== 'coderag.explain') return next(cmd, cmdArgs);
        const first = cmdArgs[0];
        const arg = typeof first === 'string' ? { question: first } : { ...(first || {}) };
        const q = arg.question || 'Explain this definition';
        return runQuestion(q, arg, (params, token) =>
          client!.sendRequest('workspace/executeCommand', { command: cmd, arguments: [params] }, token));
      },
      // The server's "cited for" lenses name its last answer: kept while that is the one on screen.
      provideCodeLenses: async (doc, token, next) => {
        const lenses = await next(doc, token);
        return lenses?.filter((l) => keepServerLens(l.command?.title, shown?.question, serverLast));
      },
      handleWorkDoneProgress: (token, params, next) => {
        next(token, params);
        if (!String(token).startsWith('coderag/index/')) return;
        if (params.kind === 'end') reaskNow();
        if (!reindex) return;
        if (params.kind === 'end') reindex.done?.(params.message || 'done');
        else if (params.message) reindex.report?.(params.message);
      },
    },
  };
  client = new LanguageClient('coderag', 'CodeRAG', serverOptions, clientOptions);
  if (workspaceFolder) {
    // vscode-languageclient sends VS Code's folders; this feature runs after its own and names
    // the root the rule found instead.
    const root = workspaceFolder;
    client.registerFeature({
      fillInitializeParams: (params: any) => {
        params.workspaceFolders = [{ uri: root.uri.toString(), name: root.name }];
        params.rootUri = root.uri.toString();
        params.rootPath = root.uri.fsPath;
      },
      fillClientCapabilities: () => undefined,
      initialize: () => undefined,
      getState: () => ({ kind: 'static' }),
      clear: () => undefined,
    });
  }
  const c = client;
  c.onDidChangeState((e) => {
    if (e.newState === State.Running) pollStatus();
    if (e.newState === State.Stopped) renderStatus(undefined);
  });
  stops.set(c, () => { stopping = true; });
  try {
    await c.start();
    startFailure?.close();
    startFailure = undefined;
  } catch (err) {
    // vscode-languageclient has shown its own error notification ("couldn't create connection
    // to server", with a button to the output): one notification, not two; the reason is in
    // the output channel and the status bar.
    const why = `could not start "${command} ${args.join(' ')}": ${err instanceof Error ? err.message : err}`;
    output.appendLine(`[error] ${why}. Check coderag.server.path.`);
    if (client === c) client = undefined;
    renderStatus(undefined);
    statusItem.tooltip = `CodeRAG: ${why}`;
  }
}

async function stopClient(): Promise<void> {
  if (statusTimer) { clearTimeout(statusTimer); statusTimer = undefined; }
  const c = client;
  client = undefined;
  if (!c) return;
  stops.get(c)?.();
  await c.stop().catch(() => undefined);
}

/** "Re-index Workspace": a notification that follows the server's indexing progress to its end. */
async function runReindex(send: () => Promise<unknown>): Promise<unknown> {
  reindex?.done?.('superseded');
  const me: typeof reindex = {};
  reindex = me;
  void vscode.window.withProgress({
    location: vscode.ProgressLocation.Notification, title: 'CodeRAG: re-indexing the workspace',
  }, (progress) => new Promise<void>((resolve) => {
    me.report = (m) => progress.report({ message: m });
    me.done = (m) => {
      resolve();
      if (reindex === me) reindex = undefined;
      if (m !== 'superseded') void vscode.window.showInformationMessage(`CodeRAG: re-indexed (${m}).`);
    };
    progress.report({ message: 'starting' });
  }));
  try {
    const r = await send();
    pollStatus();
    return r;
  } catch (err: any) {
    me.done = undefined;
    if (reindex === me) reindex = undefined;
    void vscode.window.showErrorMessage(`CodeRAG: re-index failed: ${err?.message || err}`);
    throw err;
  }
}

function renderStatus(s: StatusResult | undefined): void {
  const { text, tooltip } = statusBarText(s);
  statusItem.text = text;
  statusItem.tooltip = `${tooltip}\nClick to ask a question.`;
}

/** Polls coderag/status: every second while indexing, every 30 s after. */
function pollStatus(): void {
  if (statusTimer) clearTimeout(statusTimer);
  const c = client;
  if (!c) return;
  c.sendRequest<StatusResult>('coderag/status').then((s) => {
    renderStatus(s);
    if (lastState === 'indexing' && s.state !== 'indexing') reaskNow();
    lastState = s.state;
    statusTimer = setTimeout(pollStatus, s.state === 'indexing' ? 1000 : 30000);
  }, () => {
    renderStatus(undefined);
    statusTimer = setTimeout(pollStatus, 5000);
  });
}

export async function askQuestion(arg?: unknown, followup = false): Promise<void> {
  // From a menu the first argument is the resource, not a question.
  const question = typeof arg === 'string' ? arg : undefined;
  if (!client) { vscode.window.showErrorMessage('CodeRAG: the server is not running.'); return; }
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const last = history.entries[0];
  const q = question ?? await vscode.window.showInputBox({
    title: followup ? 'CodeRAG: Follow-up Question' : 'CodeRAG: Ask About This Codebase',
    prompt: followup && last ? `Follow-up on: ${last.question}` : 'Ask a question about this codebase',
    placeHolder: 'A question in your own words, e.g. "where is the configuration read?"',
    value: selected && selected.length < 200 && !selected.includes('\n') ? `What does ${selected} do?` : undefined,
    ignoreFocusOut: true,
  });
  if (!q || !q.trim()) return;
  const params: AskParams = buildAskParams(q, {
    mode: setting('mode') as string,
    budget: setting('budget') as number | null,
    uri: editor && editor.document.uri.scheme === 'file' ? editor.document.uri.toString() : undefined,
    position: editor ? { line: editor.selection.active.line, character: editor.selection.active.character } : undefined,
    history: followup ? history.turns(3) : undefined,
  });
  await runQuestion(q, params, (p, token) => client!.sendRequest<AskResult>('coderag/ask', p, token));
}

/**
 * Runs one question with work-done progress (the notification's text) and partial results
 * (streamed into the panel as provisional text); the final answer replaces them. The
 * notification's Cancel, or CodeRAG: Cancel, sends $/cancelRequest.
 */
async function runQuestion(q: string, params: object,
  send: (params: object, token: vscode.CancellationToken) => Promise<unknown>): Promise<AskResult | undefined> {
  const c = client;
  if (!c) return undefined;
  running?.cancel.cancel();
  const session = new AskSession(q, `coderag-vscode-${process.pid}-${++seq}`);
  const cancel = new vscode.CancellationTokenSource();
  const me = { session, cancel };
  running = me;
  let report: ((m: string) => void) | undefined;
  const subs = [
    c.onProgress(anyProgress, session.token, (v) => { session.onWorkDone(v); report?.(session.message); showPending(session); }),
    c.onProgress(anyProgress, session.partialToken, (v) => { session.onPartial(v); showPending(session); }),
  ];
  showPending(session);
  let result: AskResult | undefined;
  try {
    result = await vscode.window.withProgress({
      location: vscode.ProgressLocation.Notification, title: 'CodeRAG', cancellable: true,
    }, (progress, token) => {
      report = (m) => progress.report({ message: m });
      report(session.message);
      token.onCancellationRequested(() => cancel.cancel());
      return send(session.tokens(params), cancel.token) as Promise<AskResult>;
    });
  } catch (err: any) {
    if (cancel.token.isCancellationRequested || err?.code === -32800) session.cancelled = true;
    else {
      session.error = `CodeRAG: ${err?.message || err}`;
      vscode.window.showErrorMessage(session.error);
    }
    showPending(session);
  } finally {
    subs.forEach((d) => d.dispose());
    if (running === me) running = undefined;
  }
  if (result && typeof result === 'object' && 'answer' in result) {
    reask = result.indexing ? { question: q, params, send } : undefined;
    serverLast = q;
    history.add(q, result);
    void state?.update(HISTORY_KEY, history.toJSON());
    showAnswer(q, result);
    return result;
  }
  return undefined;
}

/** Asks again the question answered during indexing, if its answer is still the one on screen. */
function reaskNow(): void {
  const r = reask;
  reask = undefined;
  if (!r || running || shown?.question !== r.question) return;
  void runQuestion(r.question, r.params, r.send);
}

async function showHistory(): Promise<void> {
  if (!history.entries.length) { vscode.window.showInformationMessage('CodeRAG: no answers yet.'); return; }
  const pick = await vscode.window.showQuickPick(history.entries.map((e, index) => ({
    label: e.question, description: new Date(e.time).toLocaleString(), index,
  })), { title: 'CodeRAG: earlier answers' });
  if (pick) showAnswer(history.entries[pick.index].question, history.entries[pick.index].result);
}

function showPending(s: AskSession): void {
  if (running && running.session !== s) return;
  panel.show(s.question, renderPendingHtml(s.question, s));
}

/** Shows an answer; its highlights and "cited for" lenses replace those of the one shown before. */
function showAnswer(question: string, result: AskResult, context = false): void {
  const changed = shown?.question !== question || shown?.result !== result;
  shown = { question, result };
  if (changed) {
    for (const e of vscode.window.visibleTextEditors) e.setDecorations(highlight, []);
    lensesChanged.fire();
    const lensFeature = client?.getFeature('textDocument/codeLens') as any;
    for (const p of lensFeature?.getAllProviders?.() ?? []) p.onDidChangeCodeLensEmitter?.fire();
  }
  panel.show(question, renderAnswerHtml(question, result, { showContext: context }),
    { reveal: true, revealId: context ? 'context' : undefined });
}

function openFromPanel(o: PanelOpen): void {
  if (!shown) return;
  if (o.kind === 'citation') { void openCitation(shown.result.citations[o.index]); return; }
  const item = shown.result.context?.[o.index];
  if (!item || !rootUri) return;
  void openCitation({
    uri: vscode.Uri.joinPath(rootUri, ...item.path.split('/')).toString(), path: item.path,
    startLine: item.startLine, endLine: item.endLine,
    range: { start: { line: item.startLine - 1, character: 0 }, end: { line: item.endLine, character: 0 } },
  });
}

/** Opens a citation's file, reveals the range and highlights its lines. */
async function openCitation(c: Citation | undefined): Promise<void> {
  if (!c) return;
  const { startLine, endLine } = citationSelection(c);
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(c.uri));
  const editor = await vscode.window.showTextDocument(doc, {
    viewColumn: vscode.ViewColumn.One, preserveFocus: false,
  });
  const end = doc.lineAt(Math.min(endLine, doc.lineCount - 1)).range.end;
  const range = new vscode.Range(new vscode.Position(startLine, 0), end);
  editor.selection = new vscode.Selection(range.start, range.start);
  editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  editor.setDecorations(highlight, [range]);
}

async function showCitations(): Promise<void> {
  if (!shown) {
    vscode.window.showInformationMessage('CodeRAG: no answer yet — ask a question first.');
    return;
  }
  if (!shown.result.citations.length) {
    vscode.window.showInformationMessage('CodeRAG: the answer on screen has no citations.');
    return;
  }
  const items = citationQuickPickItems(shown.result);
  const pick = await vscode.window.showQuickPick(items, {
    title: `CodeRAG citations: ${shown.question.replace(/`/g, '')}`, matchOnDescription: true,
  });
  if (pick) await openCitation(shown.result.citations[pick.index]);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
