import * as vscode from 'vscode';
import {
  LanguageClient, LanguageClientOptions, ServerOptions, TransportKind, State,
} from 'vscode-languageclient/node';
import {
  AskParams, AskResult, Citation, StatusResult, buildAskParams, citationQuickPickItems,
  citationSelection, renderAnswerHtml, serverCommand, settingsToInitOptions, statusBarText,
} from './logic';

let client: LanguageClient | undefined;
let statusItem: vscode.StatusBarItem;
let statusTimer: NodeJS.Timeout | undefined;
let panel: vscode.WebviewPanel | undefined;
let last: { question: string; result: AskResult } | undefined;
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
  const clientOptions: LanguageClientOptions = {
    documentSelector: ['python', 'c', 'cpp', 'go', 'rust', 'java', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact'].map((language) => ({ scheme: 'file', language })),
    // The server registers its own file watchers, one per extension it indexes (dynamic registration).
    initializationOptions: settingsToInitOptions(setting),
    outputChannelName: 'CodeRAG',
    middleware: {
      // The server's "Ask CodeRAG" code lens runs coderag.ask on the server:
      // show what it answers in the answer panel.
      executeCommand: async (cmd, cmdArgs, next) => {
        const result = await next(cmd, cmdArgs);
        if (cmd === 'coderag.ask' && result && typeof result === 'object' && 'answer' in result) {
          const first = cmdArgs[0];
          const q = typeof first === 'string' ? first : (first && first.question) || 'CodeRAG';
          showAnswer(q, result as AskResult);
        }
        return result;
      },
    },
  };
  client = new LanguageClient('coderag', 'CodeRAG', serverOptions, clientOptions);
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

export async function askQuestion(arg?: unknown): Promise<void> {
  // From a menu the first argument is the resource, not a question.
  const question = typeof arg === 'string' ? arg : undefined;
  if (!client) { vscode.window.showErrorMessage('CodeRAG: the server is not running.'); return; }
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  const q = question ?? await vscode.window.showInputBox({
    title: 'CodeRAG: Ask About This Codebase',
    prompt: 'Ask a question about this codebase',
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
  });
  const c = client;
  const result = await vscode.window.withProgress({
    location: vscode.ProgressLocation.Notification, title: 'CodeRAG: answering…', cancellable: true,
  }, (_p, token) => c.sendRequest<AskResult>('coderag/ask', params, token)).then(
    (r) => r, (err) => { vscode.window.showErrorMessage(`CodeRAG: ${err.message || err}`); return undefined; });
  if (result) showAnswer(q, result);
}

function nonce(): string {
  let s = '';
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}

function showAnswer(question: string, result: AskResult): void {
  last = { question, result };
  if (!panel) {
    panel = vscode.window.createWebviewPanel('coderag.answer', 'CodeRAG', {
      viewColumn: vscode.ViewColumn.Beside, preserveFocus: true,
    }, { enableScripts: true, retainContextWhenHidden: true });
    panel.onDidDispose(() => { panel = undefined; });
    panel.webview.onDidReceiveMessage((m) => {
      if (m && m.type === 'open' && last) openCitation(last.result.citations[m.index]);
    });
  }
  const n = nonce();
  panel.title = `CodeRAG: ${question.length > 40 ? question.slice(0, 40) + '…' : question}`;
  panel.webview.html = `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${n}';">
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 1em; }
a.cite { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: none; }
a.cite:hover { text-decoration: underline; }
code { font-family: var(--vscode-editor-font-family); }
.meta { color: var(--vscode-descriptionForeground); font-size: 90%; }
</style></head><body>
${renderAnswerHtml(question, result)}
<script nonce="${n}">
const vscode = acquireVsCodeApi();
document.addEventListener('click', (e) => {
  const a = e.target.closest('a.cite');
  if (!a) return;
  e.preventDefault();
  vscode.postMessage({ type: 'open', index: Number(a.dataset.cite) });
});
</script></body></html>`;
  panel.reveal(vscode.ViewColumn.Beside, true);
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
