import * as vscode from 'vscode';
import {
  LanguageClient, LanguageClientOptions, ServerOptions, TransportKind, State, ProgressType,
} from 'vscode-languageclient/node';
import {
  AnswerHistory, AskParams, AskResult, AskSession, Citation, StatusResult, buildAskParams,
  citationQuickPickItems, citationSelection, findRoot, renderAnswerHtml, renderPendingHtml, serverCommand,
  settingsToInitOptions, statusBarText,
} from './logic';

let client: LanguageClient | undefined;
let statusItem: vscode.StatusBarItem;
let statusTimer: NodeJS.Timeout | undefined;
let panel: vscode.WebviewPanel | undefined;
let last: { question: string; result: AskResult } | undefined;
let running: { session: AskSession; cancel: vscode.CancellationTokenSource } | undefined;
let showContext = false;
let seq = 0;
const history = new AnswerHistory(20);
const anyProgress = new ProgressType<any>();
let highlight: vscode.TextEditorDecorationType;

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
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  statusItem.command = 'coderag.askQuestion';
  context.subscriptions.push(highlight, statusItem);

  context.subscriptions.push(
    vscode.commands.registerCommand('coderag.askQuestion', askQuestion),
    vscode.commands.registerCommand('coderag.showCitations', showCitations),
    vscode.commands.registerCommand('coderag.askFollowup', () => askQuestion(undefined, true)),
    vscode.commands.registerCommand('coderag.showHistory', showHistory),
    vscode.commands.registerCommand('coderag.showContext', () => {
      if (!last) { vscode.window.showInformationMessage('CodeRAG: no answer yet.'); return; }
      showContext = true;
      showAnswer(last.question, last.result);
    }),
    vscode.commands.registerCommand('coderag.cancel', () => running?.cancel.cancel()),
    vscode.commands.registerCommand('coderag.openCitation', (c: Citation | number) =>
      openCitation(typeof c === 'number' ? last?.result.citations[c] : c)),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('coderag.server') || e.affectsConfiguration('coderag.llm') ||
          e.affectsConfiguration('coderag.embed') || e.affectsConfiguration('coderag.indexDir') ||
          e.affectsConfiguration('coderag.exclude')) {
        const choice = await vscode.window.showInformationMessage(
          'CodeRAG settings changed: restart the server?', 'Restart');
        if (choice === 'Restart') { await stopClient(); await startClient(context); }
      }
    }),
  );
  await startClient(context);
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const { command, args } = serverCommand(setting);
  const serverOptions: ServerOptions = {
    run: { command, args, transport: TransportKind.stdio },
    debug: { command, args, transport: TransportKind.stdio, options: { env: { ...process.env, CODERAG_LOG: 'debug' } } },
  };
  // The root rule: the workspace folder's VCS or project root when it has one above it.
  const folder = vscode.workspace.workspaceFolders?.[0];
  let workspaceFolder: vscode.WorkspaceFolder | undefined;
  if (folder && folder.uri.scheme === 'file') {
    const { root } = findRoot(folder.uri.fsPath, folder.uri.fsPath);
    if (root !== folder.uri.fsPath) {
      workspaceFolder = { uri: vscode.Uri.file(root), name: root.split('/').pop() || root, index: 0 };
    }
  }
  const clientOptions: LanguageClientOptions = {
    documentSelector: ['python', 'c', 'cpp', 'go', 'rust', 'java', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact'].map((language) => ({ scheme: 'file', language })),
    workspaceFolder,
    // The server registers its own file watchers, one per extension it indexes (dynamic registration).
    initializationOptions: settingsToInitOptions(setting),
    outputChannelName: 'CodeRAG',
    middleware: {
      // The server's "Ask CodeRAG" code lens runs coderag.ask on the server:
      // show what it answers in the answer panel.
      executeCommand: async (cmd, cmdArgs, next) => {
        if (cmd !== 'coderag.ask' && cmd !== 'coderag.explain') return next(cmd, cmdArgs);
        const first = cmdArgs[0];
        const arg = typeof first === 'string' ? { question: first } : { ...(first || {}) };
        const q = arg.question || 'Explain this definition';
        return runQuestion(q, arg, (params, token) =>
          client!.sendRequest('workspace/executeCommand', { command: cmd, arguments: [params] }, token));
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
  client.onDidChangeState((e) => {
    if (e.newState === State.Running) pollStatus();
    if (e.newState === State.Stopped) renderStatus(undefined);
  });
  renderStatus({ state: 'indexing', indexed: 0, total: 0 });
  statusItem.show();
  try {
    await client.start();
  } catch (err) {
    vscode.window.showErrorMessage(
      `CodeRAG: could not start "${command} ${args.join(' ')}": ${err}. Set coderag.server.path.`);
    renderStatus(undefined);
  }
  context.subscriptions.push({ dispose: () => { void stopClient(); } });
}

async function stopClient(): Promise<void> {
  if (statusTimer) { clearTimeout(statusTimer); statusTimer = undefined; }
  const c = client;
  client = undefined;
  if (c) await c.stop().catch(() => undefined);
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
  const q = question ?? await vscode.window.showInputBox({
    title: followup ? 'CodeRAG: Follow-up Question' : 'CodeRAG: Ask About This Codebase',
    prompt: followup && last ? `Follow-up on: ${last.question}` : 'Ask a question about this codebase',
    placeHolder: 'How is tax applied to an order total?',
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
  showContext = false;
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
    history.add(q, result);
    showAnswer(q, result);
    return result;
  }
  return undefined;
}

async function showHistory(): Promise<void> {
  if (!history.entries.length) { vscode.window.showInformationMessage('CodeRAG: no answers yet.'); return; }
  const pick = await vscode.window.showQuickPick(history.entries.map((e, index) => ({
    label: e.question, description: new Date(e.time).toLocaleTimeString(), index,
  })), { title: 'CodeRAG: earlier answers' });
  if (pick) showAnswer(history.entries[pick.index].question, history.entries[pick.index].result);
}

function nonce(): string {
  let s = '';
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}

function ensurePanel(title: string): vscode.WebviewPanel {
  if (!panel) {
    panel = vscode.window.createWebviewPanel('coderag.answer', 'CodeRAG', {
      viewColumn: vscode.ViewColumn.Beside, preserveFocus: true,
    }, { enableScripts: true, retainContextWhenHidden: true });
    panel.onDidDispose(() => { panel = undefined; });
    panel.webview.onDidReceiveMessage((m) => {
      if (m && m.type === 'open' && last) openCitation(last.result.citations[m.index]);
      // A message posted before the page's script ran is lost: send the page again.
      if (m && m.type === 'ready') void panel?.webview.postMessage({ type: 'render', html: shownHtml });
    });
    const n = nonce();
    panel.webview.html = `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${n}';">
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 1em; }
a.cite { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: none; }
a.cite:hover { text-decoration: underline; }
code { font-family: var(--vscode-editor-font-family); }
.meta { color: var(--vscode-descriptionForeground); font-size: 90%; }
.provisional { color: var(--vscode-descriptionForeground); font-style: italic; }
.progress { color: var(--vscode-progressBar-background); }
.warn { color: var(--vscode-editorWarning-foreground); }
.error { color: var(--vscode-errorForeground); }
del.rejected { color: var(--vscode-errorForeground); }
table { border-collapse: collapse; } td, th { padding: 0 .6em; text-align: left; }
</style></head><body><div id="root"></div>
<script nonce="${n}">
const vscode = acquireVsCodeApi();
window.addEventListener('message', (e) => {
  if (e.data && e.data.type === 'render') document.getElementById('root').innerHTML = e.data.html;
});
document.addEventListener('click', (e) => {
  const a = e.target.closest('a.cite');
  if (!a) return;
  e.preventDefault();
  vscode.postMessage({ type: 'open', index: Number(a.dataset.cite) });
});
vscode.postMessage({ type: 'ready' });
</script></body></html>`;
  }
  panel.title = `CodeRAG: ${title.length > 40 ? title.slice(0, 40) + '…' : title}`;
  return panel;
}

let shownHtml = '';

function render(html: string): void {
  shownHtml = html;
  if (panel) void panel.webview.postMessage({ type: 'render', html });
}

function showPending(s: AskSession): void {
  if (running && running.session !== s) return;
  ensurePanel(s.question);
  render(renderPendingHtml(s.question, s));
}

function showAnswer(question: string, result: AskResult): void {
  last = { question, result };
  ensurePanel(question);
  render(renderAnswerHtml(question, result, { showContext }));
  panel!.reveal(vscode.ViewColumn.Beside, true);
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
  if (!last || !last.result.citations.length) {
    vscode.window.showInformationMessage('CodeRAG: no citations yet — ask a question first.');
    return;
  }
  const items = citationQuickPickItems(last.result);
  const pick = await vscode.window.showQuickPick(items, {
    title: `CodeRAG citations: ${last.question}`, matchOnDescription: true,
  });
  if (pick) await openCitation(last.result.citations[pick.index]);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
