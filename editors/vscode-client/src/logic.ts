// Pure logic of the CodeRAG extension: no `vscode` import, so it runs under
// node's test runner and in the server round-trip tests.

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

export interface Citation {
  uri: string;
  range: Range;
  path: string;
  startLine: number;
  endLine: number;
  symbol?: string;
  verified?: boolean;
  source?: string;
  /** "model", "extractive" or "fallback" (the server's pick); absent from older servers */
  origin?: string;
}

/**
 * Whether the server picked this citation because the model cited nothing: `origin:
 * "fallback"`; an older server without `origin` says `source: "auto"` in an answer not
 * extractive.
 */
export function serverPick(c: Citation, mode = 'llm'): boolean {
  if (c.origin) return c.origin === 'fallback';
  return mode !== 'extractive' && c.source === 'auto';
}

export interface Rejected { text: string; reason: string }

export interface ContextItem {
  path: string; startLine: number; endLine: number; symbol?: string; score?: number; via?: string[];
}

export interface AskResult {
  answer: string;
  mode: string;
  match?: 'strong' | 'weak' | 'none' | string;
  matchReason?: string;
  citations: Citation[];
  rejected?: Rejected[];
  context?: ContextItem[];
  indexing?: boolean;
  /** Present when the index a pass has not finished answered (docs/protocol.md). */
  partialIndex?: PartialIndex;
  timings?: Record<string, number>;
}

export interface Turn { question: string; answer: string }

export interface AskParams {
  question: string;
  mode?: string;
  budget?: number;
  textDocument?: { uri: string };
  position?: Position;
  history?: Turn[];
  workDoneToken?: string;
  partialResultToken?: string;
}

/** An index a pass has not finished (docs/protocol.md, `partialIndex`). */
export interface PartialIndex { state: 'indexing' | 'partial' | string; indexed: number; total: number; pid?: number }

export interface StatusResult {
  state: 'indexing' | 'ready' | 'error' | string;
  files?: number; chunks?: number; indexed?: number; total?: number; message?: string;
  roots?: { partialIndex?: PartialIndex }[];
}

/** What a person reads of an index that is not whole, or '' for a whole one. */
export function partialIndexText(p: PartialIndex | undefined): string {
  if (!p || !p.total) return '';
  if (p.state === 'indexing')
    return `indexing ${p.indexed}/${p.total} files${p.pid ? ` (process ${p.pid})` : ''}`;
  return `partial: ${p.indexed}/${p.total} files indexed, then the pass stopped`;
}

export const VCS_MARKERS = ['.git', '.hg', '.svn', '.jj'];
/** The server's project markers, in its order (`coderag root --markers`; tests/cli/root_markers.sh checks). */
export const PROJECT_MARKERS = ['pyproject.toml', 'setup.py', 'setup.cfg', 'configure.ac',
  'compile_commands.json', '.clangd', 'go.mod', 'go.work', 'Cargo.toml', 'pom.xml', 'build.gradle',
  'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts', 'package.json', 'deno.json',
  'tsconfig.json'];

/**
 * The root rule shared by every coderag client (editors/README.md): from `start` (a file's
 * folder, or the workspace folder) upwards, the nearest folder with a VCS marker, else the
 * nearest with a project marker, else `opened` (the folder the editor was opened in). A
 * `.coderag/` index is never a marker. `exists` is injectable for tests.
 */
export function findRoot(start: string, opened: string,
  exists: (p: string) => boolean = (p) => require('fs').existsSync(p)): { root: string; how: string } {
  const path = require('path') as typeof import('path');
  for (const [markers, how] of [[VCS_MARKERS, 'vcs'], [PROJECT_MARKERS, 'project']] as const) {
    let dir = path.resolve(start);
    for (;;) {
      if (markers.some((m) => exists(path.join(dir, m)))) return { root: dir, how };
      const parent = path.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return { root: path.resolve(opened), how: 'opened' };
}

/** Reads a setting by its key below `coderag.` (e.g. `llm.url`). */
export type SettingGetter = (key: string) => unknown;

const FORWARDED_KEYS = [
  'indexDir', 'exclude',
  'llm.url', 'llm.model', 'llm.apiKeyEnv',
  'embed.provider', 'embed.url', 'embed.model', 'embed.apiKeyEnv',
];

function isSet(v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') return v.trim() !== '';
  if (Array.isArray(v)) return v.length > 0;
  return true;
}

/**
 * Maps the extension's settings to the server's initializationOptions, in
 * the nested form (`{"llm": {"url": …}}`). Empty settings are left out so
 * that the server's CODERAG_* environment variables still apply.
 */
export function settingsToInitOptions(get: SettingGetter): Record<string, unknown> {
  const out: Record<string, any> = {};
  for (const key of FORWARDED_KEYS) {
    let v = get(key);
    if (!isSet(v)) continue;
    if (typeof v === 'string') v = v.trim();
    const dot = key.indexOf('.');
    if (dot < 0) {
      out[key] = v;
    } else {
      const group = key.slice(0, dot);
      out[group] = out[group] || {};
      out[group][key.slice(dot + 1)] = v;
    }
  }
  return out;
}

/**
 * The server command line from the settings: coderag.server.path when set, else the server the
 * extension carries (`bundled`, a platform-specific .vsix's server/coderag), else `coderag` on PATH.
 */
export function serverCommand(get: SettingGetter, bundled?: string): { command: string; args: string[] } {
  const p = get('server.path');
  const a = get('server.args');
  return {
    command: typeof p === 'string' && p.trim() ? p.trim() : bundled || 'coderag',
    args: Array.isArray(a) && a.length ? a.map(String) : ['lsp'],
  };
}

/**
 * The file a command names, as the server would be started: a path (with a `/`) as is, a bare
 * name searched in `pathVar`'s folders. Undefined when it is not an executable file.
 */
export function whichExecutable(command: string, pathVar: string,
  isExec: (p: string) => boolean = defaultIsExec): string | undefined {
  const path = require('path') as typeof import('path');
  if (command.includes('/')) return isExec(command) ? command : undefined;
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, command);
    if (isExec(p)) return p;
  }
  return undefined;
}

function defaultIsExec(p: string): boolean {
  const fs = require('fs') as typeof import('fs');
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** coderag/ask params for a question asked where the user stands. */
export function buildAskParams(question: string, opts: {
  mode?: string; budget?: number | null; uri?: string; position?: Position; history?: Turn[];
} = {}): AskParams {
  const p: AskParams = { question: question.trim() };
  if (opts.mode && opts.mode !== 'auto') p.mode = opts.mode;
  if (typeof opts.budget === 'number' && opts.budget > 0) p.budget = opts.budget;
  if (opts.history && opts.history.length) p.history = opts.history;
  if (opts.uri) {
    p.textDocument = { uri: opts.uri };
    p.position = opts.position || { line: 0, character: 0 };
  }
  return p;
}

/**
 * The range to reveal and highlight for a citation: whole lines
 * startLine..endLine (1-based inclusive) as 0-based lines. The server's
 * `range.end` is the start of the line after the span; the selection ends at
 * the end of the last cited line instead (character is clamped by the editor).
 */
export function citationSelection(c: Citation): { startLine: number; endLine: number } {
  let start = c.range ? c.range.start.line : c.startLine - 1;
  let end: number;
  if (typeof c.endLine === 'number') end = c.endLine - 1;
  else if (c.range && c.range.end.character === 0 && c.range.end.line > start) end = c.range.end.line - 1;
  else end = c.range ? c.range.end.line : start;
  if (end < start) end = start;
  return { startLine: start, endLine: end };
}

/** The label of a citation, as `path:a-b` (or `path:a`). */
export function citationLabel(c: Citation): string {
  return c.startLine === c.endLine ? `${c.path}:${c.startLine}` : `${c.path}:${c.startLine}-${c.endLine}`;
}

export interface QuickPickEntry { label: string; description: string; detail?: string; index: number }

/** Entries of the "Show Citations" quick pick. */
export function citationQuickPickItems(r: AskResult): QuickPickEntry[] {
  return (r.citations || []).map((c, index) => ({
    label: c.symbol ? `$(symbol-method) ${c.symbol}` : '$(file-code) module code',
    description: citationLabel(c),
    detail: r.mode === 'extractive' ? 'quoted by the extractive answer'
      : serverPick(c, r.mode) ? 'picked by the server (the model cited nothing)' : 'cited by the model, verified',
    index,
  }));
}

/** The citation a `[path:a-b]` marker of the answer refers to, if any. */
export function findCitation(cites: Citation[], path: string, start: number, end: number): number {
  let best = -1;
  for (let i = 0; i < cites.length; i++) {
    const c = cites[i];
    if (c.path !== path) continue;
    if (c.startLine === start && c.endLine === end) return i;
    if (best < 0 && c.startLine <= end && start <= c.endLine) best = i;
  }
  return best;
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

const CITE_RE = /\[([^\[\]\s:]+):(\d+)(?:\s*[-\u2013\u2014]\s*(\d+))?\]/g;

/**
 * A link to citation i. No `href`: VS Code's webview host scrolls the page to the top on a
 * click on `href="#"` before the page's own handler runs; the page's script opens it
 * (click, or Enter on the focused link).
 */
function citeLink(i: number, text: string): string {
  return `<a class="cite" role="link" tabindex="0" data-cite="${i}" title="Open ${escapeHtml(text)}">${escapeHtml(text)}</a>`;
}

/** A link to context item i (opened like a citation, by the page's script). */
function contextLink(i: number, text: string): string {
  // The path may wrap at its slashes; the line numbers never wrap inside.
  const m = /^(.*?)(:\d+(?:-\d+)?)$/.exec(text);
  const shown = m ? `${escapeHtml(m[1])}<span class="lines">${m[2]}</span>` : escapeHtml(text);
  return `<a class="cite" role="link" tabindex="0" data-context="${i}" title="Open ${escapeHtml(text)}">${shown}</a>`;
}

/**
 * Inline markdown (code spans, bold, citations) of one already-split line, to HTML. Code spans
 * are set aside first (their content is left alone) and bold applies across them, so
 * `**`app.py`**` is a bold code span.
 */
export function renderInline(line: string, cites: Citation[]): string {
  const spans: string[] = [];
  const held = line.replace(/`([^`]*)`/g, (_m, code: string) => {
    spans.push(`<code>${escapeHtml(code)}</code>`);
    return `\u0000${spans.length - 1}\u0000`;
  });
  let out = '';
  let last = 0;
  CITE_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = CITE_RE.exec(held)) !== null) {
    out += inlineText(held.slice(last, m.index));
    const start = Number(m[2]);
    const end = m[3] ? Number(m[3]) : start;
    const i = findCitation(cites, m[1], start, end);
    out += i >= 0 ? citeLink(i, m[0]) : escapeHtml(m[0]);
    last = m.index + m[0].length;
  }
  out += inlineText(held.slice(last));
  out = out.replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>');
  return out.replace(/\u0000(\d+)\u0000/g, (_m, n: string) => spans[Number(n)]);
}

function inlineText(s: string): string {
  return escapeHtml(s);
}

/** A question as a panel tab title: markdown code marks dropped, at most 40 characters. */
export function panelTitle(question: string): string {
  const t = question.replace(/`/g, '').replace(/\s+/g, ' ').trim();
  return `CodeRAG: ${t.length > 40 ? t.slice(0, 40) + '…' : t}`;
}

/** A question as the panel's heading: its code spans as code. */
export function questionHtml(question: string): string {
  return `<h2>${renderInline(question, [])}</h2>`;
}

/**
 * The body of the answer panel: the answer's markdown as HTML whose
 * `[path:a-b]` markers are links to their citations, then the list of
 * verified citations and of the rejected ones.
 */
export function renderAnswerHtml(question: string, r: AskResult,
  opts: { bodyOnly?: boolean; showContext?: boolean } = {}): string {
  const cites = r.citations || [];
  const html: string[] = [];
  if (!opts.bodyOnly) html.push(questionHtml(question));
  if (!opts.bodyOnly && r.indexing) {
    html.push('<p class="warn">The index is still being built: this answer comes from the files indexed so far. ' +
      'It is asked again when indexing ends.</p>');
  }
  if (!opts.bodyOnly && partialIndexText(r.partialIndex)) {
    html.push(`<p class="warn">The index is not whole (${escapeHtml(partialIndexText(r.partialIndex))}): ` +
      'this answer may miss code.</p>');
  }
  let first = !opts.bodyOnly && (r.match === 'weak' || r.match === 'none');
  let inList = false;
  let inCode = false;
  const code: string[] = [];
  for (const raw of (r.answer || '').split('\n')) {
    if (raw.trim().startsWith('```')) {
      if (inCode) {
        html.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
        code.length = 0;
      } else if (inList) { html.push('</ul>'); inList = false; }
      inCode = !inCode;
      continue;
    }
    if (inCode) { code.push(raw); continue; }
    const item = /^\s*[-*]\s+(.*)$/.exec(raw);
    if (item) {
      if (!inList) { html.push('<ul>'); inList = true; }
      html.push(`<li>${renderInline(item[1], cites)}</li>`);
      continue;
    }
    if (inList) { html.push('</ul>'); inList = false; }
    if (raw.trim() === '') continue;
    const h = /^(#{1,6})\s+(.*)$/.exec(raw);
    if (h) { const n = Math.min(h[1].length + 2, 6); html.push(`<h${n}>${renderInline(h[2], cites)}</h${n}>`); continue; }
    html.push(`<p${first ? ' class="warn"' : ''}>${renderInline(raw, cites)}</p>`);
    first = false;
  }
  if (inCode) html.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`);
  if (inList) html.push('</ul>');
  if (opts.bodyOnly) return html.join('\n');
  html.push(citationsHtml(cites, r.mode));
  const rej = r.rejected || [];
  if (rej.length) {
    html.push(`<h3>Rejected citations (${rej.length})</h3><ul class="rejected">`);
    for (const x of rej) html.push(`<li><del class="rejected"><code>${escapeHtml(x.text)}</code></del> — ${escapeHtml(x.reason)}</li>`);
    html.push('</ul>');
  }
  html.push(contextHtml(r.context || [], opts.showContext === true));
  html.push(`<p class="meta">mode: ${escapeHtml(r.mode || '?')}${r.match ? ` · match: ${escapeHtml(r.match)}` : ''}` +
    `${r.indexing ? ' · index still building' : ''}</p>`);
  return html.join('\n');
}

/**
 * The citations list. A citation the model wrote and the server checked is "verified"; one
 * the server added because the model cited nothing (serverPick) is
 * labelled as the server's pick. An extractive answer is the server's own: its citations are
 * its quotes, checked like any other. An answer without citations says so.
 */
export function citationsHtml(cites: Citation[], mode = 'llm'): string {
  if (!cites.length) return '<h3>Citations</h3>\n<p class="meta">This answer has no citations.</p>';
  const extractive = mode === 'extractive';
  const auto = cites.filter((c) => serverPick(c, mode)).length;
  const model = cites.length - auto;
  const parts: string[] = [];
  if (extractive) parts.push(`${cites.length}, quoted by the extractive answer`);
  else {
    if (model) parts.push(`${model} verified`);
    if (auto) parts.push(`${auto} picked by the server`);
  }
  const html = [`<h3>Citations (${parts.join(', ')})</h3>`];
  if (auto && !model && !extractive)
    html.push('<p class="meta">The model cited nothing: these are the evidence the server picked for its answer.</p>');
  html.push('<ol class="citations">');
  cites.forEach((c, i) => {
    const label = extractive ? '' : serverPick(c, mode) ? ' <span class="meta">(picked by the server)</span>'
      : ' <span class="meta">(verified)</span>';
    html.push(`<li>${citeLink(i, citationLabel(c))}${c.symbol ? ` <code>${escapeHtml(c.symbol)}</code>` : ''}${label}</li>`);
  });
  html.push('</ol>');
  return html.join('\n');
}

/** The context items best first: by score, the server's order among equal scores. */
export function sortedContext(items: ContextItem[]): { item: ContextItem; index: number }[] {
  return items.map((item, index) => ({ item, index }))
    .sort((a, b) => (b.item.score ?? 0) - (a.item.score ?? 0) || a.index - b.index);
}

const VIA_NAMES: Record<string, string> = { bm25: 'words', dense: 'meaning', graph: 'call graph' };

/**
 * The context an answer used, best first: score, lines (links that open them, `data-context`
 * is the item's index in `items`), symbol, how it was found. `open` shows it unfolded.
 */
export function contextHtml(items: ContextItem[], open = false): string {
  if (!items.length) return '';
  const rows = sortedContext(items).map(({ item: c, index }, i) =>
    `<tr><td>${i + 1}</td><td>${(c.score ?? 0).toFixed(2)}</td>` +
    `<td>${contextLink(index, citationLabel(c as Citation))}</td><td>${c.symbol ? `<code>${escapeHtml(c.symbol)}</code>` : ''}</td>` +
    `<td>${escapeHtml((c.via || []).map((v) => VIA_NAMES[v] || v).join(' + '))}</td></tr>`);
  return `<details class="context" id="context"${open ? ' open' : ''}><summary>Context the answer used (${items.length})</summary>` +
    '<p class="meta">What the answer was given to read, best first. <b>score</b>: the relevance the search ' +
    'gave it, from 0 to 1 (1 is the best match of this question); <b>found by</b>: words (the question\'s ' +
    'words in the code), meaning (embeddings), call graph (a caller or callee of a match).</p>' +
    `<table class="context"><tr><th>#</th><th>score</th><th>lines</th><th>symbol</th><th>found by</th></tr>${rows.join('')}</table></details>`;
}

/** What the panel shows while a question runs: progress, then the provisional text. */
export function renderPendingHtml(question: string, s: AskSession): string {
  const html: string[] = [questionHtml(question)];
  if (s.error) html.push(`<p class="error">${escapeHtml(s.error)}</p>`);
  else if (s.cancelled) html.push('<p class="warn">Cancelled.</p>');
  else html.push(`<p class="progress">… ${escapeHtml(s.message)}</p>`);
  if (s.text) {
    html.push('<div class="provisional"><p class="meta">Provisional — not yet verified:</p>');
    html.push(renderAnswerHtml('', { answer: s.text, mode: s.mode || 'llm', citations: [] }, { bodyOnly: true }));
    html.push('</div>');
  }
  if (s.context.length) html.push(contextHtml(s.context));
  return html.join('\n');
}

/**
 * The client side of one streamed question (docs/protocol.md, "Streaming, progress and
 * cancel"): work-done progress values on `workDoneToken`, partial results on
 * `partialResultToken`, then the final result.
 */
export class AskSession {
  message = 'asking';
  text = '';
  mode?: string;
  match?: string;
  context: ContextItem[] = [];
  partials = 0;
  messages: string[] = [];
  cancelled = false;
  error?: string;
  result?: AskResult;
  constructor(readonly question: string, readonly token: string) {}
  get partialToken(): string { return `${this.token}-partial`; }
  /** Adds the two tokens to the request params. */
  tokens<T extends object>(params: T): T & { workDoneToken: string; partialResultToken: string } {
    return { ...params, workDoneToken: this.token, partialResultToken: this.partialToken };
  }
  onWorkDone(v: { kind?: string; message?: string; percentage?: number }): void {
    if (v && typeof v.message === 'string') { this.message = v.message; this.messages.push(v.message); }
  }
  onPartial(v: { answer?: string; context?: ContextItem[]; match?: string; mode?: string; stage?: string }): void {
    if (!v) return;
    this.partials++;
    if (typeof v.answer === 'string' && v.answer !== '') this.text = v.answer;
    if (Array.isArray(v.context)) this.context = v.context;
    if (v.match) this.match = v.match;
    if (v.mode) this.mode = v.mode;
  }
}

export interface HistoryEntry { question: string; result: AskResult; time: number }

/**
 * The last answers, newest first, for reopening and for follow-up questions. `toJSON`/`load`
 * carry them across restarts (the extension keeps them in the workspace's state).
 */
export class AnswerHistory {
  readonly entries: HistoryEntry[] = [];
  constructor(readonly size = 20) {}
  add(question: string, result: AskResult, time = Date.now()): void {
    this.entries.unshift({ question, result, time });
    if (this.entries.length > this.size) this.entries.length = this.size;
  }
  /** The last n turns, oldest first (the request's `history`). */
  turns(n = 3): Turn[] {
    return this.entries.slice(0, n).reverse().map((e) => ({ question: e.question, answer: e.result.answer }));
  }
  /** What is stored: the entries without timings (plain JSON). */
  toJSON(): HistoryEntry[] {
    return this.entries.map((e) => ({ question: e.question, time: e.time, result: { ...e.result, timings: undefined } }));
  }
  /** Replaces the entries with stored ones, skipping any that is not an answer. */
  load(stored: unknown): void {
    this.entries.length = 0;
    if (!Array.isArray(stored)) return;
    for (const e of stored) {
      if (!e || typeof e.question !== 'string' || !e.result || typeof e.result.answer !== 'string') continue;
      const result: AskResult = { ...e.result, citations: Array.isArray(e.result.citations) ? e.result.citations : [] };
      this.entries.push({ question: e.question, result, time: typeof e.time === 'number' ? e.time : 0 });
      if (this.entries.length >= this.size) break;
    }
  }
}

/** The prefix of the server's lenses over the ranges its last answer cited. */
export const CITED_FOR = 'cited for: ';

/**
 * Whether a server lens stays: its "cited for" lenses name the server's last answer; when the
 * panel shows another one (from the history), they are dropped for `citedForLenses`.
 */
export function keepServerLens(title: string | undefined, shown: string | undefined, serverLast: string | undefined): boolean {
  if (!title || !title.startsWith(CITED_FOR)) return true;
  return shown === undefined || shown.trim() === serverLast?.trim();
}

/**
 * The "cited for" lenses of the answer on screen in one document (by its URI), when it is not
 * the server's last answer (whose lenses the server gives, following edits): 0-based lines.
 * `isDoc` tells a citation's URI names the document.
 */
export function citedForLenses(shown: { question: string; result: AskResult } | undefined, serverLast: string | undefined,
  isDoc: (uri: string) => boolean): { line: number; title: string }[] {
  if (!shown || shown.question.trim() === serverLast?.trim()) return [];
  const q = shown.question.length > 120 ? shown.question.slice(0, 120) + '…' : shown.question;
  const seen = new Set<number>();
  const out: { line: number; title: string }[] = [];
  for (const c of shown.result.citations || []) {
    if (!isDoc(c.uri)) continue;
    const line = citationSelection(c).startLine;
    if (seen.has(line)) continue;
    seen.add(line);
    out.push({ line, title: CITED_FOR + q });
  }
  return out;
}

/** The text of the status bar item for a coderag/status result. */
export function statusBarText(s: StatusResult | undefined): { text: string; tooltip: string } {
  if (!s) return { text: '$(circle-slash) CodeRAG', tooltip: 'CodeRAG: server not running' };
  const partial = partialIndexText((s.roots || []).map((r) => r.partialIndex).find((p) => p));
  if (s.state === 'indexing' && !s.total && partial) // waiting for another process's pass
    return { text: `$(sync~spin) CodeRAG: ${partial.replace(/, then the pass stopped$/, '')}`, tooltip: `CodeRAG: ${partial}` };
  if (s.state === 'indexing') {
    const done = s.indexed ?? 0;
    const total = s.total ?? 0;
    const what = total > 0 ? ` ${done}/${total} files` : '';
    return { text: `$(sync~spin) CodeRAG: indexing${what}`, tooltip: `CodeRAG: indexing${what || ' (looking for files)'}; questions wait for the first index` };
  }
  if (partial && s.state !== 'error')
    return { text: `$(warning) CodeRAG: ${partial.replace(/, then the pass stopped$/, '')}`, tooltip: `CodeRAG: ${partial}; answers may miss code` };
  if (s.state === 'error')
    return { text: '$(error) CodeRAG', tooltip: `CodeRAG: ${s.message || 'index error'}` };
  return { text: `$(book) CodeRAG: ${s.files ?? 0} files`, tooltip: `CodeRAG: ready, ${s.files ?? 0} files, ${s.chunks ?? 0} chunks` };
}

/** The `$/progress` value as status bar text, or undefined at the end. */
export function progressText(v: { kind: string; title?: string; message?: string; percentage?: number }, title: string): string | undefined {
  if (v.kind === 'end') return undefined;
  const pct = typeof v.percentage === 'number' ? ` ${v.percentage}%` : '';
  return `$(sync~spin) ${v.title || title}${pct}${v.message ? ` (${v.message})` : ''}`;
}
