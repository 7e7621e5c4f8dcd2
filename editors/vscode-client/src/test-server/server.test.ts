// The extension's request/response handling against the real server, over
// vscode-jsonrpc (the transport vscode-languageclient uses): initialize with
// the initializationOptions the settings produce, wait for the index, ask,
// and check the citation links and selections the extension would build.
//
//   CODERAG_BIN=/path/to/coderag node --test out/test-server/
import { test, before, after } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection, MessageConnection, StreamMessageReader, StreamMessageWriter,
  ProgressType, CancellationTokenSource, ResponseError,
} from 'vscode-jsonrpc/node';
import {
  AskSession, AnswerHistory, renderPendingHtml, AskResult, StatusResult, buildAskParams, citationQuickPickItems, citationSelection,
  renderAnswerHtml, settingsToInitOptions,
} from '../logic';

const repo = path.resolve(__dirname, '..', '..', '..', '..');
const bin = process.env.CODERAG_BIN || path.join(repo, 'build', 'coderag');
const fixture = process.env.CODERAG_FIXTURE || path.join(repo, 'tests', 'fixtures', 'shop');

let tmp: string;
let ws: string;
let proc: ChildProcess;
let conn: MessageConnection;
let exitCode: Promise<number | null>;
const progress: any[] = [];
const created: unknown[] = [];
let stderr = '';
let llm: ChildProcess | undefined;
let llmUrl = '';

async function llmControl(p: string, body: unknown = {}): Promise<any> {
  const r = await fetch(`${llmUrl}/_control/${p}`, { method: 'POST', body: JSON.stringify(body) });
  return r.json();
}

async function startFakeLlm(): Promise<void> {
  const script = process.env.CODERAG_FAKE_LLM || path.join(repo, 'tests', 'fake_openai.py');
  llm = spawn('python3', [script, '--watch-stdin'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    llm!.stdout!.on('data', (d) => {
      out += d.toString();
      const m = /^(\d+)\n/.exec(out);
      if (m) resolve(m[1]);
    });
    llm!.on('exit', () => reject(new Error('fake LLM exited')));
  });
  llmUrl = `http://127.0.0.1:${port}`;
}

function sleep(ms: number) { return new Promise((r) => setTimeout(r, ms)); }

// Waits end on the state they wait for; ms is a last-resort bound on a hang
// (a loaded one-core machine with a sanitized server must never reach it).
async function waitFor<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 600000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

before(async () => {
  assert.ok(fs.existsSync(bin), `no server at ${bin} (set CODERAG_BIN)`);
  await startFakeLlm();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'coderag-vscode-'));
  ws = path.join(tmp, 'shop');
  fs.cpSync(fixture, ws, { recursive: true });
  proc = spawn(bin, ['lsp'], { cwd: ws, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, CODERAG_LOG: 'warn' } });
  proc.stderr!.on('data', (d) => { stderr += d.toString(); });
  exitCode = new Promise((r) => proc.on('exit', (code) => r(code)));
  conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  conn.onRequest('window/workDoneProgress/create', (p: any) => { created.push(p.token); return null; });
  conn.onRequest('client/registerCapability', () => null);
  conn.onRequest('workspace/configuration', (p: any) => p.items.map(() => null));
  // Progress on tokens nobody registered (the indexing's); onNotification('$/progress') would
  // replace vscode-jsonrpc's own dispatch to onProgress handlers.
  conn.onUnhandledProgress((p: any) => { progress.push(p); });
  conn.onNotification('window/showMessage', () => undefined);
  conn.onNotification('window/logMessage', () => undefined);
  conn.listen();
  // What the extension sends for these settings.
  const settings: Record<string, unknown> = { indexDir: path.join(tmp, 'index'), 'embed.provider': 'builtin', 'llm.url': llmUrl };
  const init: any = await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(ws).href,
    workspaceFolders: [{ uri: pathToFileURL(ws).href, name: 'shop' }],
    capabilities: {
      window: { workDoneProgress: true },
      workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, workspaceFolders: true },
      textDocument: { hover: { contentFormat: ['markdown', 'plaintext'] }, codeLens: {} },
    },
    initializationOptions: settingsToInitOptions((k) => settings[k]),
  });
  assert.ok(init.capabilities.codeLensProvider, 'code lens capability');
  assert.ok(init.capabilities.hoverProvider, 'hover capability');
  assert.deepEqual([...init.capabilities.executeCommandProvider.commands].sort(), ['coderag.ask', 'coderag.explain', 'coderag.reindex']);
  await conn.sendNotification('initialized', {});
});

after(async () => {
  if (conn) {
    await conn.sendRequest('shutdown').catch(() => undefined);
    await conn.sendNotification('exit').catch(() => undefined);
  }
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exitCode, new Promise((r) => { timer = setTimeout(() => r('timeout'), 300000); })]);
  clearTimeout(timer);
  if (code === 'timeout') proc.kill('SIGKILL');
  conn?.dispose();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  llm?.kill();
  assert.equal(code, 0, `server exit code (stderr: ${stderr.slice(-500)})`);
});

test('indexing is reported through $/progress and coderag/status', async () => {
  const status = await waitFor<StatusResult>('ready', async () => {
    const s = await conn.sendRequest<StatusResult>('coderag/status');
    return s.state === 'ready' ? s : undefined;
  });
  assert.ok((status.files ?? 0) >= 4, `files: ${status.files}`);
  await waitFor('progress end', () => (progress.some((p) => p.value.kind === 'end') ? true : undefined));
  const begin = progress.find((p) => p.value.kind === 'begin');
  assert.ok(begin, 'a progress begin');
  assert.match(begin.value.title, /index/i);
  assert.ok(created.includes(begin.token), 'progress token was created first');
  assert.ok(fs.existsSync(path.join(tmp, 'index')), 'indexDir from the nested initializationOptions is used');
  assert.ok(!fs.existsSync(path.join(ws, '.coderag')), 'no index in the workspace');
});

test('coderag/ask: citations become links that reveal the cited lines', async () => {
  const models = path.join(ws, 'shop', 'models.py');
  const params = buildAskParams('How is tax applied to an order total?', {
    mode: 'extractive', uri: pathToFileURL(models).href, position: { line: 35, character: 15 },
  });
  const r = await conn.sendRequest<AskResult>('coderag/ask', params);
  assert.equal(r.mode, 'extractive');
  assert.ok(r.citations.length > 0, 'citations');
  const lines = fs.readFileSync(models, 'utf8').split('\n');
  for (const c of r.citations) {
    assert.equal(c.verified, true);
    assert.equal(c.uri, pathToFileURL(path.join(ws, c.path)).href, 'uri matches path');
    const sel = citationSelection(c);
    assert.equal(sel.startLine, c.startLine - 1);
    assert.equal(sel.endLine, c.endLine - 1);
    assert.equal(c.range.start.line, sel.startLine);
  }
  const tax = r.citations.findIndex((c) => c.symbol === 'apply_tax');
  assert.ok(tax >= 0, `apply_tax among ${r.citations.map((c) => c.symbol).join(', ')}`);
  const c = r.citations[tax];
  assert.deepEqual([c.path, c.startLine, c.endLine], ['shop/models.py', 39, 41]);
  assert.match(lines[citationSelection(c).startLine], /^def apply_tax/);
  const total = r.citations.find((x) => x.symbol === 'Order.total');
  assert.ok(total && total.startLine === 34 && total.endLine === 36, 'Order.total 34-36');
  // Every [path:a-b] marker of the answer that names a citation is a link to it.
  const html = renderAnswerHtml('How is tax applied to an order total?', r);
  assert.match(html, new RegExp(`data-cite="${tax}"[^>]*>\\[shop/models.py:39-41\\]</a>`));
  const linked = new Set([...html.matchAll(/data-cite="(\d+)"/g)].map((m) => Number(m[1])));
  assert.equal(linked.size, r.citations.length, 'each citation is linked');
  for (const i of linked) assert.ok(i >= 0 && i < r.citations.length);
  const items = citationQuickPickItems(r);
  assert.equal(items[tax].description, 'shop/models.py:39-41');
});

test('code lenses: "Ask CodeRAG" runs coderag.ask through workspace/executeCommand', async () => {
  const models = path.join(ws, 'shop', 'models.py');
  const uri = pathToFileURL(models).href;
  await conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'python', version: 1, text: fs.readFileSync(models, 'utf8') },
  });
  const lenses: any[] = await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } });
  const ask = lenses.find((l) => l.command && l.command.command === 'coderag.ask' && l.range.start.line === 38);
  assert.ok(ask, 'an Ask CodeRAG lens above apply_tax');
  assert.equal(ask.command.title, 'Ask CodeRAG');
  // What the extension's executeCommand middleware forwards and then shows.
  const r: AskResult = await conn.sendRequest('workspace/executeCommand', {
    command: ask.command.command, arguments: ask.command.arguments,
  });
  assert.ok(typeof r.answer === 'string' && r.answer.length > 0);
  assert.ok(r.citations.some((c) => c.path === 'shop/models.py' && c.startLine <= 39 && c.endLine >= 39),
    'the lens question cites apply_tax');
  // The last answer's citations get "cited for" lenses.
  const after: any[] = await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } });
  assert.ok(after.some((l) => /^cited for: /.test(l.command?.title || '')), 'cited-for lens');
});

test('hover on a name gives its definition', async () => {
  const models = path.join(ws, 'shop', 'models.py');
  const uri = pathToFileURL(models).href;
  const h: any = await conn.sendRequest('textDocument/hover', {
    textDocument: { uri }, position: { line: 35, character: 16 },
  });
  assert.ok(h && h.contents, 'hover result');
  const text = typeof h.contents === 'string' ? h.contents : h.contents.value;
  assert.match(text, /apply_tax/);
});

// What runQuestion in extension.ts does, over the same transport.
function startQuestion(q: string, params: object, token?: CancellationTokenSource) {
  const session = new AskSession(q, `t-${Math.random().toString(36).slice(2)}`);
  const type = new ProgressType<any>();
  const order: string[] = [];
  const subs = [
    conn.onProgress(type, session.token, (v) => { session.onWorkDone(v); order.push(`progress:${v.kind}`); }),
    conn.onProgress(type, session.partialToken, (v) => { session.onPartial(v); order.push(`partial:${v.stage}`); }),
  ];
  const full = session.tokens(params);
  // An undefined token would make vscode-jsonrpc send the params by position.
  const reply = (token ? conn.sendRequest<AskResult>('coderag/ask', full, token.token) : conn.sendRequest<AskResult>('coderag/ask', full))
    .then((r) => { order.push('result'); session.result = r; return r; })
    .finally(() => subs.forEach((d) => d.dispose()));
  return { session, reply, order };
}

test('streaming: progress at once, provisional text before the verified result, rejected listed', async () => {
  // The fake LLM sends its first words, then holds the rest until released.
  await llmControl('reset', { actions: { chat: [{ content: 'Tax is applied by apply_tax [{ctx0}] and not [shop/nowhere.py:1-2].', chunk: 5, hold_after: 'rest' }] } });
  const models = path.join(ws, 'shop', 'models.py');
  const { session, reply, order } = startQuestion('How is tax applied to an order total?', buildAskParams(
    'How is tax applied to an order total?', { mode: 'llm', uri: pathToFileURL(models).href, position: { line: 35, character: 15 } }));
  await waitFor('provisional text', () => (session.text.includes('Tax') ? true : undefined));
  assert.equal(session.result, undefined, 'no result while the LLM holds');
  assert.match(renderPendingHtml(session.question, session), /Provisional[\s\S]*Tax/);
  assert.ok(session.context.length > 0, 'the context partial came first');
  await llmControl('release', { name: 'rest' });
  const r = await reply;
  assert.equal(r.mode, 'llm');
  assert.equal(order[0], 'progress:begin', `first message: ${order.join(', ')}`);
  const firstText = order.indexOf('partial:writing');
  assert.ok(firstText >= 0 && firstText < order.indexOf('result'), `streamed text before the result: ${order.join(', ')}`);
  assert.match(session.text, /apply_tax/);
  assert.ok(r.rejected && r.rejected.some((x) => x.text.includes('shop/nowhere.py')), 'rejected');
  assert.ok(['strong', 'weak', 'none'].includes(String(r.match)), `match ${r.match}`);
  const html = renderAnswerHtml('How is tax applied to an order total?', r);
  assert.match(html, /<del class="rejected"><code>\[shop\/nowhere.py:1-2\]<\/code><\/del>/);
  assert.ok(!html.includes('Provisional'));
});

test('cancel: $/cancelRequest is answered with -32800 and the LLM connection is closed', async () => {
  await llmControl('reset', { actions: { chat: [{ hold: 'never' }] } });
  const src = new CancellationTokenSource();
  const { session, reply } = startQuestion('How is the order total computed?', { question: 'How is the order total computed?', mode: 'llm' }, src);
  assert.equal((await llmControl('wait', { kind: 'start', count: 1, timeout_s: 300 })).ok, true, 'the LLM request started');
  assert.match(renderPendingHtml(session.question, session), /…/);
  src.cancel();
  const err = await reply.then(() => undefined, (e) => e);
  assert.ok(err instanceof ResponseError && err.code === -32800, `error ${err && err.code}`);
  assert.equal((await llmControl('wait', { kind: 'closed', count: 1, timeout_s: 300 })).ok, true, 'LLM connection closed');
  assert.ok(session.messages.includes('cancelled'), `progress ends cancelled: ${session.messages.join(' | ')}`);
  await llmControl('reset', {});
});

test('a follow-up sends the previous turn as history and is answered', async () => {
  const h = new AnswerHistory();
  const first = await conn.sendRequest<AskResult>('coderag/ask', buildAskParams('How is tax applied to an order total?', { mode: 'extractive' }));
  h.add('How is tax applied to an order total?', first);
  const params = buildAskParams('And where is it called?', { mode: 'extractive', history: h.turns() });
  assert.deepEqual(params.history, [{ question: 'How is tax applied to an order total?', answer: first.answer }]);
  const r = await conn.sendRequest<AskResult>('coderag/ask', params);
  assert.ok(typeof r.answer === 'string' && r.answer.length > 0, 'answered (the history is accepted)');
});
