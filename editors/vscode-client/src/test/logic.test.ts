import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  serverPick, findRoot, AnswerHistory, AskSession, contextHtml, renderPendingHtml, AskResult, Citation, buildAskParams, citationLabel, citationQuickPickItems, citationSelection,
  findCitation, progressText, citationsHtml, sortedContext, renderInline, panelTitle, questionHtml, keepServerLens,
  citedForLenses, whichExecutable, renderAnswerHtml, serverCommand, settingsToInitOptions, statusBarText,
} from '../logic';

function cite(path: string, a: number, b: number, symbol?: string, source = 'auto'): Citation {
  return {
    uri: `file:///ws/${path}`, path, startLine: a, endLine: b, symbol, source, verified: true,
    range: { start: { line: a - 1, character: 0 }, end: { line: b, character: 0 } },
  };
}

test('settings map to nested initializationOptions, empty ones left out', () => {
  const settings: Record<string, unknown> = {
    'llm.url': ' http://127.0.0.1:8080 ', 'llm.model': 'qwen2.5-coder', 'llm.apiKeyEnv': '',
    'embed.provider': 'builtin', 'embed.url': null, 'indexDir': undefined, 'exclude': ['build/**'],
  };
  const o = settingsToInitOptions((k) => settings[k]);
  assert.deepEqual(o, {
    llm: { url: 'http://127.0.0.1:8080', model: 'qwen2.5-coder' },
    embed: { provider: 'builtin' },
    exclude: ['build/**'],
  });
  assert.deepEqual(settingsToInitOptions(() => undefined), {});
  assert.deepEqual(settingsToInitOptions((k) => (k === 'exclude' ? [] : k === 'indexDir' ? '/tmp/idx' : null)),
    { indexDir: '/tmp/idx' });
});

test('server command defaults to coderag lsp', () => {
  assert.deepEqual(serverCommand(() => undefined), { command: 'coderag', args: ['lsp'] });
  assert.deepEqual(serverCommand((k) => (k === 'server.path' ? '/opt/coderag/bin/coderag' : undefined)),
    { command: '/opt/coderag/bin/coderag', args: ['lsp'] });
  assert.deepEqual(serverCommand((k) => (k === 'server.args' ? ['lsp', '--threads', '2'] : '')),
    { command: 'coderag', args: ['lsp', '--threads', '2'] });
  // A .vsix that carries the server uses it, unless coderag.server.path says otherwise.
  assert.deepEqual(serverCommand(() => '', '/ext/server/coderag'), { command: '/ext/server/coderag', args: ['lsp'] });
  assert.deepEqual(serverCommand((k) => (k === 'server.path' ? '/usr/bin/coderag' : undefined), '/ext/server/coderag'),
    { command: '/usr/bin/coderag', args: ['lsp'] });
});

test('ask params carry the document and position, mode only when not auto', () => {
  assert.deepEqual(buildAskParams('  Why?  '), { question: 'Why?' });
  assert.deepEqual(buildAskParams('Why?', { mode: 'extractive', budget: 4000, uri: 'file:///ws/a.py', position: { line: 3, character: 4 } }), {
    question: 'Why?', mode: 'extractive', budget: 4000,
    textDocument: { uri: 'file:///ws/a.py' }, position: { line: 3, character: 4 },
  });
  assert.deepEqual(buildAskParams('Why?', { mode: 'auto', budget: null, uri: 'file:///ws/a.py' }), {
    question: 'Why?', textDocument: { uri: 'file:///ws/a.py' }, position: { line: 0, character: 0 },
  });
});

test('citation selection covers the cited lines, 0-based', () => {
  assert.deepEqual(citationSelection(cite('shop/models.py', 39, 41)), { startLine: 38, endLine: 40 });
  assert.deepEqual(citationSelection(cite('a.py', 7, 7)), { startLine: 6, endLine: 6 });
  const noLines = { ...cite('a.py', 1, 1), endLine: undefined as unknown as number,
    range: { start: { line: 9, character: 0 }, end: { line: 12, character: 0 } } };
  assert.deepEqual(citationSelection(noLines), { startLine: 9, endLine: 11 });
  assert.equal(citationLabel(cite('a.py', 7, 7)), 'a.py:7');
  assert.equal(citationLabel(cite('a.py', 7, 9)), 'a.py:7-9');
});

test('the extractive answer renders as a lead, numbered code blocks and a folded list (issue 36)', () => {
  const cites = [cite('shop/models.py', 34, 36, 'Order.total'), cite('shop/models.py', 39, 41, 'apply_tax'),
    cite('shop/payments/gateway.py', 8, 12, 'Gateway.charge')];
  const r: AskResult = {
    answer: 'The best match is `Order.total`: `def total(self):`. It calls `apply_tax`.\n\n' +
      '**1. `Order.total`** [shop/models.py:34-36]\n```\n   34 \u2502 def total(self):\n   36 \u2502     return apply_tax(subtotal)\n```\n\n' +
      '**2. `apply_tax`** [shop/models.py:39-41] \u2014 Adds value-added tax to an amount\n```\n   39 \u2502 def apply_tax(amount):\n```\n\n' +
      'Also relevant:\n- `Gateway.charge` [shop/payments/gateway.py:8-12] \u2014 `def charge(self, order: Order, token):`\n' +
      '- and 6 more in the context list\n',
    mode: 'extractive', citations: cites,
  };
  const html = renderAnswerHtml('How is tax applied?', r);
  assert.match(html, /<p>The best match is <code>Order.total<\/code>/);
  assert.match(html, /<p><strong>1\. <code>Order.total<\/code><\/strong> <a class="cite"[^>]*data-cite="0"/);
  assert.match(html, /<pre><code> {3}34 \u2502 def total\(self\):\n {3}36 \u2502 {5}return apply_tax\(subtotal\)<\/code><\/pre>/);
  assert.match(html, /<pre><code> {3}39 \u2502 def apply_tax\(amount\):<\/code><\/pre>/);
  assert.match(html, /<p>Also relevant:<\/p>\n<ul>\n<li><code>Gateway.charge<\/code> <a class="cite"[^>]*data-cite="2"/);
  assert.match(html, /<li>and 6 more in the context list<\/li>/);
});

test('answer markers link to their citations', () => {
  const cites = [cite('shop/models.py', 34, 36, 'Order.total'), cite('shop/models.py', 39, 41, 'apply_tax')];
  assert.equal(findCitation(cites, 'shop/models.py', 39, 41), 1);
  assert.equal(findCitation(cites, 'shop/models.py', 40, 40), 1);
  assert.equal(findCitation(cites, 'shop/models.py', 1, 5), -1);
  assert.equal(findCitation(cites, 'shop/other.py', 39, 41), -1);
  const r: AskResult = {
    answer: 'Tax is added by `apply_tax` [shop/models.py:39-41], called from **Order.total** [shop/models.py:34-36].\n\n' +
      '- unrelated [shop/gone.py:1-2]\n- <script>x</script>\n\n```\n[shop/models.py:39-41] in code\n```',
    mode: 'llm', citations: cites,
    rejected: [{ text: '[shop/gone.py:1-2]', reason: 'file-not-found' }],
  };
  const html = renderAnswerHtml('How is <tax> applied?', r);
  assert.match(html, /<a class="cite" role="link" tabindex="0" data-cite="1"[^>]*>\[shop\/models.py:39-41\]<\/a>/);
  // No href: VS Code's webview scrolls to the top on a click on href="#".
  assert.ok(!html.includes('href='), 'citation links carry no href');
  assert.match(html, /data-cite="0"[^>]*>\[shop\/models.py:34-36\]<\/a>/);
  assert.match(html, /<strong>Order.total<\/strong>/);
  assert.match(html, /<code>apply_tax<\/code>/);
  assert.ok(!html.includes('data-cite="-1"'));
  assert.ok(html.includes('[shop/gone.py:1-2]'), 'an unmatched marker stays as text');
  assert.ok(!html.includes('<script>x'), 'HTML is escaped');
  assert.ok(html.includes('How is &lt;tax&gt; applied?'));
  assert.match(html, /<pre><code>\[shop\/models.py:39-41\] in code<\/code><\/pre>/);
  assert.match(html, /Rejected citations \(1\)/);
  assert.match(html, /file-not-found/);
  assert.match(html, /<del class="rejected"><code>\[shop\/gone.py:1-2\]<\/code><\/del>/, 'rejected struck out');
  // The citation list links every citation, in order.
  const listed = [...html.matchAll(/data-cite="(\d+)"[^>]*>(shop\/models\.py:[\d-]+)</g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(listed, [['0', 'shop/models.py:34-36'], ['1', 'shop/models.py:39-41']]);
});

test('quick pick lists citations with symbol and location', () => {
  const items = citationQuickPickItems({ answer: '', mode: 'llm',
    citations: [cite('shop/models.py', 39, 41, 'apply_tax'), cite('shop/__init__.py', 1, 5, undefined, 'model')] });
  assert.equal(items.length, 2);
  assert.equal(items[0].description, 'shop/models.py:39-41');
  assert.match(items[0].label, /apply_tax/);
  assert.match(items[1].label, /module code/);
  assert.match(items[1].detail || '', /model, verified/);
  assert.match(items[0].detail || '', /picked by the server/);
  assert.doesNotMatch(items[0].detail || '', /verified/);
  assert.equal(items[1].index, 1);
  const ex = citationQuickPickItems({ answer: '', mode: 'extractive', citations: [cite('a.py', 1, 2)] });
  assert.match(ex[0].detail || '', /extractive/);
});

test('status bar text follows coderag/status and $/progress', () => {
  assert.match(statusBarText({ state: 'indexing', indexed: 3, total: 12 }).text, /CodeRAG: indexing 3\/12 files/);
  // An index another process is building (or one a pass left half done): said, with its count.
  const partial = { state: 'ready', files: 500, roots: [{ partialIndex: { state: 'indexing', indexed: 500, total: 1200, pid: 42 } }] };
  assert.match(statusBarText(partial).text, /CodeRAG: indexing 500\/1200 files \(process 42\)/);
  assert.match(statusBarText({ ...partial, roots: [{ partialIndex: { state: 'partial', indexed: 500, total: 1200, pid: 0 } }] }).text,
    /CodeRAG: partial: 500\/1200 files indexed$/);
  const html = renderAnswerHtml('Q', { answer: 'A.', mode: 'extractive', citations: [], partialIndex: { state: 'partial', indexed: 500, total: 1200 } });
  assert.match(html, /The index is not whole \(partial: 500\/1200 files indexed, then the pass stopped\): this answer may miss code/);
  assert.doesNotMatch(renderAnswerHtml('Q', { answer: 'A.', mode: 'extractive', citations: [] }), /not whole/);
  assert.match(statusBarText({ state: 'ready', files: 5, chunks: 20 }).text, /5 files/);
  assert.match(statusBarText({ state: 'error', message: 'disk full' }).tooltip, /disk full/);
  assert.match(statusBarText(undefined).tooltip, /not running/);
  assert.equal(progressText({ kind: 'report', message: '3/12 files', percentage: 25 }, 'Indexing'),
    '$(sync~spin) Indexing 25% (3/12 files)');
  assert.equal(progressText({ kind: 'end' }, 'Indexing'), undefined);
});

test('a streamed question: progress text, provisional text, tokens in the params', () => {
  const s = new AskSession('Why?', 'tok-1');
  assert.deepEqual(s.tokens({ question: 'Why?' }), { question: 'Why?', workDoneToken: 'tok-1', partialResultToken: 'tok-1-partial' });
  s.onWorkDone({ kind: 'begin', message: 'retrieving' });
  s.onPartial({ stage: 'context', answer: '', match: 'strong', context: [{ path: 'a.py', startLine: 1, endLine: 3, score: 0.5, via: ['bm25'] }] });
  s.onPartial({ stage: 'writing', answer: 'Tax is `apply_tax` [a.py:1-3]' });
  s.onWorkDone({ kind: 'report', message: 'writing the answer: 4 tokens' });
  assert.equal(s.message, 'writing the answer: 4 tokens');
  assert.equal(s.partials, 2);
  assert.equal(s.match, 'strong');
  const html = renderPendingHtml('Why?', s);
  assert.match(html, /writing the answer: 4 tokens/);
  assert.match(html, /Provisional/);
  assert.match(html, /<code>apply_tax<\/code>/);
  assert.match(html, /Context the answer used \(1\)/);
  s.cancelled = true;
  assert.match(renderPendingHtml('Why?', s), /Cancelled\./);
});

test('history keeps the last answers and gives follow-up turns oldest first', () => {
  const h = new AnswerHistory(2);
  const r = (a: string): AskResult => ({ answer: a, mode: 'extractive', citations: [] });
  h.add('q1', r('a1')); h.add('q2', r('a2')); h.add('q3', r('a3'));
  assert.deepEqual(h.entries.map((e) => e.question), ['q3', 'q2']);
  assert.deepEqual(h.turns(3), [{ question: 'q2', answer: 'a2' }, { question: 'q3', answer: 'a3' }]);
  assert.deepEqual(buildAskParams('and then?', { history: h.turns(1) }).history, [{ question: 'q3', answer: 'a3' }]);
});

test('the context table shows score, lines, symbol and via; a weak match is flagged', () => {
  const html = contextHtml([{ path: 'a.py', startLine: 1, endLine: 3, symbol: 'f', score: 0.923, via: ['bm25', 'graph'] }], true);
  assert.match(html, /<details class="context" id="context" open>/);
  assert.match(html, /<td>0.92<\/td><td><a class="cite"[^>]*data-context="0"[^>]*>a.py<span class="lines">:1-3<\/span><\/a><\/td><td><code>f<\/code><\/td><td>words \+ call graph<\/td>/);
  assert.match(html, /<b>score<\/b>: /, 'the score is explained');
  const weak = renderAnswerHtml('Q', { answer: '**Weak match:** little matches.\n\nRest.', mode: 'extractive', match: 'weak', citations: [] });
  assert.match(weak, /<p class="warn"><strong>Weak match:<\/strong> little matches.<\/p>/);
  assert.match(weak, /match: weak/);
});

test('the root rule: VCS root, else project marker, else the opened folder; .coderag/ is no marker', () => {
  const fsys = new Set(['/r/.git', '/r/pkg/pyproject.toml', '/p/pyproject.toml', '/plain/flask/.coderag', '/wt/.git']);
  const ex = (p: string) => fsys.has(p);
  assert.deepEqual(findRoot('/r/pkg/sub', '/r/pkg/sub', ex), { root: '/r', how: 'vcs' });
  assert.deepEqual(findRoot('/p/pkg/mod', '/p/pkg/mod', ex), { root: '/p', how: 'project' });
  assert.deepEqual(findRoot('/plain/flask', '/plain', ex), { root: '/plain', how: 'opened' });
  assert.deepEqual(findRoot('/wt/a', '/wt/a', ex), { root: '/wt', how: 'vcs' });
});

test('the context is listed by score, best first; its lines open (data-context is the item\'s index)', () => {
  const items = [
    { path: 'b.py', startLine: 5, endLine: 6, score: 0.4 },
    { path: 'a.py', startLine: 1, endLine: 3, score: 0.9 },
    { path: 'c.py', startLine: 2, endLine: 2, score: 0.4 },
  ];
  assert.deepEqual(sortedContext(items).map((x) => x.index), [1, 0, 2]);
  const html = contextHtml(items);
  // The line numbers in a span that never wraps (a narrow panel wrapped "58-7" / "4").
  const order = [...html.matchAll(/data-context="(\d+)"[^>]*>([^<]+)<span class="lines">([^<]+)</g)].map((m) => [m[1], m[2] + m[3]]);
  assert.deepEqual(order, [['1', 'a.py:1-3'], ['0', 'b.py:5-6'], ['2', 'c.py:2']]);
  assert.doesNotMatch(html, / open>/, 'folded unless asked');
});

test('bold around a code span, as file headings are written, renders as bold code', () => {
  assert.equal(renderInline('**`flask/app.py`**', []), '<strong><code>flask/app.py</code></strong>');
  assert.equal(renderInline('a `x**y` and **b**', []), 'a <code>x**y</code> and <strong>b</strong>');
  const html = renderAnswerHtml('Q', { answer: '### **`flask/app.py`**\n- `run` [flask/app.py:1-2]', mode: 'llm', citations: [cite('flask/app.py', 1, 2)] });
  assert.ok(!html.includes('**'), 'no literal ** left');
  assert.match(html, /<h5><strong><code>flask\/app.py<\/code><\/strong><\/h5>/);
});

test('a question with code marks: code in the heading, no backticks in the tab title', () => {
  const q = 'What does `Flask.run` in flask/app.py do?';
  assert.equal(questionHtml(q), '<h2>What does <code>Flask.run</code> in flask/app.py do?</h2>');
  assert.equal(panelTitle(q), 'CodeRAG: What does Flask.run in flask/app.py do?');
  assert.ok(!panelTitle(q).includes('`'));
  assert.equal(panelTitle('x'.repeat(50)), `CodeRAG: ${'x'.repeat(40)}…`);
  assert.ok(!renderAnswerHtml(q, { answer: 'a', mode: 'llm', citations: [] }).includes('`'));
});

test('citations: the model\'s are verified, the server\'s picks say so, none says none', () => {
  const model = citationsHtml([cite('a.py', 1, 2, 'f', 'model')], 'llm');
  assert.match(model, /Citations \(1 verified\)/);
  assert.match(model, /\(verified\)/);
  const auto = citationsHtml([cite('a.py', 1, 2, 'f', 'auto')], 'llm');
  assert.match(auto, /Citations \(1 picked by the server\)/);
  assert.match(auto, /The model cited nothing/);
  assert.doesNotMatch(auto, /verified/);
  const mixed = citationsHtml([cite('a.py', 1, 2, 'f', 'model'), cite('b.py', 1, 2, 'g', 'auto')], 'llm');
  assert.match(mixed, /1 verified, 1 picked by the server/);
  assert.match(citationsHtml([cite('a.py', 1, 2)], 'extractive'), /quoted by the extractive answer/);
  // origin, when the server sends it, decides: an extractive citation in an LLM-mode answer
  // is not the server's pick; a fallback one is.
  const ex = { ...cite('a.py', 1, 2, 'f', 'auto'), origin: 'extractive' };
  const fb = { ...cite('b.py', 1, 2, 'g', 'auto'), origin: 'fallback' };
  assert.doesNotMatch(citationsHtml([ex], 'llm'), /picked by the server/);
  assert.match(citationsHtml([fb], 'llm'), /Citations \(1 picked by the server\)/);
  assert.ok(serverPick(fb) && !serverPick(ex) && !serverPick({ ...fb, origin: 'model' }));
  const none = renderAnswerHtml('Q', { answer: 'Nothing relevant found.', mode: 'llm', citations: [] });
  assert.match(none, /This answer has no citations\./);
  assert.doesNotMatch(none, /Citations \(0/);
});

test('history survives a restart as plain JSON, and bad stored entries are skipped', () => {
  const h = new AnswerHistory(3);
  h.add('q1', { answer: 'a1', mode: 'llm', citations: [cite('a.py', 1, 2)], timings: { total_ms: 3 } }, 1000);
  h.add('q2', { answer: 'a2', mode: 'extractive', citations: [] }, 2000);
  const stored = JSON.parse(JSON.stringify(h.toJSON()));
  const back = new AnswerHistory(3);
  back.load([...stored, null, { question: 'x' }, { question: 'y', result: { answer: 3 } }]);
  assert.deepEqual(back.entries.map((e) => [e.question, e.result.answer, e.time]), [['q2', 'a2', 2000], ['q1', 'a1', 1000]]);
  assert.equal(back.entries[1].result.citations[0].path, 'a.py');
  assert.equal(back.entries[1].result.timings, undefined);
  back.load(undefined);
  assert.equal(back.entries.length, 0);
});

test('"cited for" lenses follow the answer on screen, not the server\'s last', () => {
  const older = { question: 'Where is tax applied?', result: { answer: 'x', mode: 'llm', citations: [cite('shop/models.py', 39, 41), cite('shop/models.py', 39, 40), cite('shop/other.py', 3, 4)] } };
  const isModels = (u: string) => u === 'file:///ws/shop/models.py';
  // The server's last answer is on screen: its lenses stay, none added.
  assert.ok(keepServerLens('cited for: Where is tax applied?', 'Where is tax applied?', 'Where is tax applied?'));
  assert.deepEqual(citedForLenses(older, 'Where is tax applied?', isModels), []);
  // An older answer is on screen: the server's "cited for" lenses go, the shown answer's come.
  assert.ok(!keepServerLens('cited for: Newer?', 'Where is tax applied?', 'Newer?'));
  assert.ok(keepServerLens('2 callers, 0 references', 'Where is tax applied?', 'Newer?'));
  assert.deepEqual(citedForLenses(older, 'Newer?', isModels), [{ line: 38, title: 'cited for: Where is tax applied?' }]);
  assert.deepEqual(citedForLenses(undefined, 'Newer?', isModels), []);
});

test('the server binary is looked up as the server would be started', () => {
  const files = new Set(['/opt/bin/coderag', '/abs/coderag']);
  const ex = (p: string) => files.has(p);
  assert.equal(whichExecutable('coderag', '/usr/bin:/opt/bin', ex), '/opt/bin/coderag');
  assert.equal(whichExecutable('coderag', '/usr/bin', ex), undefined);
  assert.equal(whichExecutable('/abs/coderag', '', ex), '/abs/coderag');
  assert.equal(whichExecutable('/abs/missing', '/opt/bin', ex), undefined);
});

test('an answer given while indexing says so first', () => {
  const html = renderAnswerHtml('Q', { answer: 'Partial.', mode: 'extractive', citations: [], indexing: true });
  assert.ok(html.indexOf('still being built') > 0 && html.indexOf('still being built') < html.indexOf('Partial.'));
  assert.match(html, /asked again when indexing ends/);
  assert.doesNotMatch(renderAnswerHtml('Q', { answer: 'Done.', mode: 'extractive', citations: [] }), /still being built/);
});
