// The answer panel: one webview that shows the running question, then the answer.
import * as vscode from 'vscode';
import { panelTitle } from './logic';

function nonce(): string {
  let s = '';
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}

/** What the page asks for: open citation `index` of the shown answer, or its context item. */
export type PanelOpen = { kind: 'citation' | 'context'; index: number };

function pageHtml(n: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${n}';">
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 1em; }
a.cite { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: none; }
a.cite:hover, a.cite:focus { text-decoration: underline; }
code { font-family: var(--vscode-editor-font-family); }
.meta { color: var(--vscode-descriptionForeground); font-size: 90%; }
.provisional { color: var(--vscode-descriptionForeground); font-style: italic; }
.progress { color: var(--vscode-progressBar-background); }
.warn { color: var(--vscode-editorWarning-foreground); }
.error { color: var(--vscode-errorForeground); }
del.rejected { color: var(--vscode-errorForeground); }
details.context summary { cursor: pointer; font-weight: bold; margin: .8em 0 .4em; }
table.context { border-collapse: collapse; width: 100%; }
table.context td, table.context th { padding: .1em .6em; text-align: left; vertical-align: top; }
table.context td:nth-child(3) { overflow-wrap: anywhere; }
table.context .lines { white-space: nowrap; }
table.context tr:nth-child(even) { background: var(--vscode-editor-inactiveSelectionBackground); }
</style></head><body><div id="root"></div>
<script nonce="${n}">
const vscode = acquireVsCodeApi();
window.addEventListener('message', (e) => {
  const m = e.data;
  if (!m) return;
  if (m.type === 'render') document.getElementById('root').innerHTML = m.html;
  if (m.type === 'reveal') {
    const el = document.getElementById(m.id);
    if (el) { if (el.tagName === 'DETAILS') el.open = true; el.scrollIntoView({ block: 'start' }); }
  }
});
function open(a) {
  if (a.dataset.cite !== undefined) vscode.postMessage({ type: 'open', kind: 'citation', index: Number(a.dataset.cite) });
  else if (a.dataset.context !== undefined) vscode.postMessage({ type: 'open', kind: 'context', index: Number(a.dataset.context) });
}
document.addEventListener('click', (e) => {
  const a = e.target.closest('a.cite');
  if (!a) return;
  e.preventDefault();
  open(a);
});
document.addEventListener('keydown', (e) => {
  const a = e.key === 'Enter' && e.target.closest && e.target.closest('a.cite');
  if (a) { e.preventDefault(); open(a); }
});
vscode.postMessage({ type: 'ready' });
</script></body></html>`;
}

/** The panel, created on first use and again after the user closes it. */
export class AnswerPanel {
  private panel: vscode.WebviewPanel | undefined;
  private html = '';
  private revealId: string | undefined;

  constructor(private readonly onOpen: (o: PanelOpen) => void) {}

  private ensure(question: string): vscode.WebviewPanel {
    if (!this.panel) {
      const panel = vscode.window.createWebviewPanel('coderag.answer', 'CodeRAG', {
        viewColumn: vscode.ViewColumn.Beside, preserveFocus: true,
      }, { enableScripts: true, retainContextWhenHidden: true });
      this.panel = panel;
      panel.onDidDispose(() => { this.panel = undefined; });
      panel.webview.onDidReceiveMessage((m) => {
        if (m && m.type === 'open') this.onOpen({ kind: m.kind === 'context' ? 'context' : 'citation', index: Number(m.index) });
        // A message posted before the page's script ran is lost: send the page again.
        if (m && m.type === 'ready') this.post();
      });
      panel.webview.html = pageHtml(nonce());
    }
    this.panel.title = panelTitle(question);
    return this.panel;
  }

  private post(): void {
    if (!this.panel) return;
    void this.panel.webview.postMessage({ type: 'render', html: this.html });
    if (this.revealId) void this.panel.webview.postMessage({ type: 'reveal', id: this.revealId });
  }

  /** Shows html for question; `revealId` scrolls to the element with that id. */
  show(question: string, html: string, opts: { reveal?: boolean; revealId?: string } = {}): void {
    const panel = this.ensure(question);
    this.html = html;
    this.revealId = opts.revealId;
    this.post();
    if (opts.reveal) panel.reveal(vscode.ViewColumn.Beside, true);
  }
}
