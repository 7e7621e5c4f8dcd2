// `coderag mcp` driven by the official MCP TypeScript SDK client (Client +
// StdioClientTransport) on a copy of tests/fixtures/longdef: every tool, bad
// input, progress, freshness after an edit, and search == ask's context.
// With CODERAG_MCP_CORPUS=/path/to/a/python/tree, the tools also run on that
// real corpus (the README's manual check; skipped when unset).
//
//   CODERAG_BIN=build/coderag node --test tests/mcp/sdk.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const BIN = process.env.CODERAG_BIN || path.join(repo, 'build', 'coderag');
const FIXTURE = path.join(repo, 'tests', 'fixtures', 'longdef');

let tmp, root, client, stderr = '', stderrEnd;

async function connect(dir) {
    const transport = new StdioClientTransport({
        command: BIN,
        args: ['mcp', '--root', dir],
        stderr: 'pipe',
        env: { ...process.env, CODERAG_LOG: process.env.CODERAG_LOG || 'info' },
    });
    transport.stderr?.on('data', (d) => { stderr += d.toString(); });
    const ended = new Promise((resolve) => transport.stderr?.on('end', resolve));
    stderrEnd ??= ended; // the fixture's server (the first one)
    const c = new Client({ name: 'coderag-sdk-test', version: '1.0.0' });
    await c.connect(transport);
    return c;
}

const call = (name, args, opts) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: 120000, ...opts });

before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'coderag-mcp-sdk-'));
    root = path.join(tmp, 'ws');
    fs.cpSync(FIXTURE, root, { recursive: true });
    client = await connect(root);
});

after(async () => {
    fs.rmSync(tmp, { recursive: true, force: true });
});

test('initialize negotiates the current revision', () => {
    assert.equal(client.getServerVersion().name, 'coderag');
    assert.ok(client.getServerCapabilities().tools);
    assert.match(client.getInstructions(), /search/);
});

test('tools/list: every tool with an object input schema', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['ask', 'callees', 'callers', 'definition', 'read', 'search', 'status']);
    for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.equal(t.inputSchema.additionalProperties, false, t.name);
        assert.ok(t.description.length > 40, t.name);
    }
    const ask = tools.find((t) => t.name === 'ask');
    assert.deepEqual(ask.inputSchema.required, ['question']);
});

test('search ranks the long method first', async () => {
    // With onprogress the SDK sends a progress token. Whether its handler
    // sees the notification is not checked here: the SDK (1.32) handles
    // notifications a microtask later than responses, so a notification read
    // in the same chunk as its response is dropped. The transcripts check
    // progress (tests/mcp/transcripts/lifecycle.txt).
    const r = await call('search', { query: 'merge response headers', limit: 3 },
        { onprogress: () => {} });
    assert.ok(!r.isError, r.content[0].text);
    const res = r.structuredContent.results;
    assert.ok(res.length >= 1 && res.length <= 3);
    assert.equal(res[0].symbol, 'Application.make_response');
    assert.equal(res[0].path, 'webapp/app.py');
    assert.ok(res[0].via.includes('bm25'));
    assert.match(r.content[0].text, /^1\. webapp\/app\.py:\d+-\d+ Application\.make_response/);
});

test('search returns exactly the context ask answers from', async () => {
    const q = "How does the application convert a view's return value into a response?";
    const s = await call('search', { query: q, limit: 50 });
    const a = await call('ask', { question: q, mode: 'extractive' });
    const key = (x) => `${x.path}:${x.startLine}-${x.endLine} ${x.symbol}`;
    assert.deepEqual(s.structuredContent.results.map(key), a.structuredContent.context.map(key));
});

test('ask: verified citations, match, context', async () => {
    const r = await call('ask', { question: 'Where is ResponseError raised when a view returns None?' });
    assert.ok(!r.isError, r.content[0].text);
    const s = r.structuredContent;
    assert.equal(s.mode, 'extractive');
    assert.ok(['strong', 'weak'].includes(s.match));
    assert.ok(s.citations.length >= 1);
    for (const c of s.citations) {
        assert.equal(c.verified, true);
        assert.ok(fs.existsSync(path.join(root, c.path)), c.path);
        assert.ok(s.answer.includes(`[${c.path}:${c.startLine}-${c.endLine}]`) ||
                  c.source === 'auto');
    }
    assert.ok(s.context.length >= 1);
});

test('definition: every definition of a name, the asked file first', async () => {
    const r = await call('definition', { symbol: 'make_response', path: 'webapp/helpers.py' });
    const d = r.structuredContent.definitions;
    assert.equal(r.structuredContent.total, 2);
    assert.equal(d[0].path, 'webapp/helpers.py');
    assert.equal(d[1].symbol, 'Application.make_response');
    assert.equal(d[1].startLine, 124); // the whole long method, not one piece
    assert.equal(d[1].endLine, 276);
    assert.equal(d[1].qualifiedName, 'webapp.app.Application.make_response');
    assert.match(d[1].signature, /def make_response\(self, rv/);
    assert.match(d[1].docstring, /Convert a view/);
});

test('callers and callees from the graph, with its limits', async () => {
    let r = await call('callers', { symbol: 'webapp.app.Application.make_response' });
    let d = r.structuredContent.definitions;
    assert.equal(d.length, 1);
    assert.deepEqual(d[0].references.map((x) => `${x.relation} ${x.symbol}`),
        ['call Application.dispatch']);
    assert.match(r.structuredContent.limits, /not known statically/); // the Python row's limits
    assert.match(r.content[0].text, /getattr/);
    // callees of the definition around a line of its third piece
    r = await call('callees', { path: 'webapp/app.py', line: 270 });
    d = r.structuredContent.definitions;
    assert.equal(d[0].symbol, 'Application.make_response');
    const rel = d[0].references.map((x) => `${x.relation} ${x.path}:${x.symbol}`);
    assert.ok(rel.includes('call webapp/helpers.py:make_response'), rel.join(', '));
    // kinds filter
    r = await call('callers', { symbol: 'Application', kinds: ['import'] });
    assert.deepEqual(r.structuredContent.definitions[0].references.map((x) => x.relation), ['import']);
});

test('read: numbered lines of an indexed file, capped', async () => {
    let r = await call('read', { path: 'webapp/app.py', startLine: 124, endLine: 125 });
    assert.ok(!r.isError);
    assert.equal(r.structuredContent.text,
        '    def make_response(self, rv, **options):\n' +
        '        """Convert a view\'s return value into a response object."""\n');
    assert.equal(r.structuredContent.totalLines, 404);
    r = await call('read', { path: 'webapp/app.py', startLine: 1, endLine: 100000 });
    assert.equal(r.structuredContent.truncated, true);
    assert.equal(r.structuredContent.endLine, 400);
    r = await call('read', { path: path.join(root, 'webapp', 'serve.py') });
    assert.equal(r.structuredContent.path, 'webapp/serve.py');
});

test('status: what is indexed', async () => {
    const r = await call('status', {});
    assert.equal(r.structuredContent.files, 5);
    assert.equal(r.structuredContent.root, fs.realpathSync(root));
    assert.match(r.structuredContent.embedder, /builtin|none/);
    assert.equal(r.structuredContent.llm, 'none');
});

test('bad input: one-line tool errors, and the server carries on', async () => {
    const cases = [
        ['ask', {}, /argument 'question' is missing/],
        ['ask', { question: 42 }, /must be a string/],
        ['ask', { question: 'x'.repeat(10 << 20) }, /at most 8192/],
        ['ask', { question: '   ' }, /empty question/],
        ['ask', { question: 'q', mode: 'psychic' }, /one of auto, extractive, llm/],
        ['search', { query: 'x', limit: 'ten' }, /must be an integer/],
        ['search', { query: 'x', limit: 0 }, /between 1 and 50/],
        ['search', { query: 'x', colour: 'red' }, /unknown argument 'colour'/],
        ['read', { path: '../../../etc/passwd' }, /outside the workspace/],
        ['read', { path: '/etc/passwd' }, /outside the workspace/],
        ['read', { path: '.coderag/index.db' }, /not an indexed file/],
        ['read', { path: 'webapp/app.py', startLine: 9, endLine: 3 }, /before startLine/],
        ['read', { path: 'webapp/app.py', startLine: 5000 }, /has 404 lines/],
        ['callers', { kinds: ['call'] }, /give a symbol/],
        ['callers', { symbol: 'x', kinds: ['teleport'] }, /list of import, call, inherit, raise/],
        ['no_such_tool', {}, /unknown tool 'no_such_tool'/],
    ];
    for (const [name, args, want] of cases) {
        const r = await call(name, args);
        assert.equal(r.isError, true, `${name} ${JSON.stringify(args).slice(0, 80)}`);
        assert.match(r.content[0].text, want);
        assert.ok(!r.content[0].text.includes('\n'), 'one line');
    }
    const r = await call('status', {});
    assert.ok(!r.isError);
});

test('an edited file is answered about at once', async () => {
    fs.writeFileSync(path.join(root, 'webapp', 'extra.py'),
        'def brand_new_helper(x):\n    """Added while the server runs."""\n    return x\n');
    let r = await call('definition', { symbol: 'brand_new_helper' });
    assert.equal(r.structuredContent.total, 1);
    assert.equal(r.structuredContent.definitions[0].path, 'webapp/extra.py');
    fs.mkdirSync(path.join(root, 'webapp', 'sub'));
    fs.writeFileSync(path.join(root, 'webapp', 'sub', 'deep.py'), 'def deep_new_thing():\n    pass\n');
    r = await call('definition', { symbol: 'deep_new_thing' });
    assert.equal(r.structuredContent.total, 1);
    fs.rmSync(path.join(root, 'webapp', 'extra.py'));
    r = await call('definition', { symbol: 'brand_new_helper' });
    assert.equal(r.structuredContent.total, 0);
});

test('a real corpus (CODERAG_MCP_CORPUS)', { skip: !process.env.CODERAG_MCP_CORPUS }, async () => {
    const c = await connect(process.env.CODERAG_MCP_CORPUS);
    try {
        const t = (name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: 600000 });
        const s = await t('status', {});
        assert.ok(s.structuredContent.files > 10);
        const q = await t('search', { query: 'how are url rules matched', limit: 5 });
        assert.ok(q.structuredContent.results.length === 5);
        const top = q.structuredContent.results[0];
        const d = await t('definition', { symbol: top.symbol.split('.').pop() });
        assert.ok(d.structuredContent.total >= 1);
        const cl = await t('callers', { path: top.path, line: top.startLine });
        assert.ok(!cl.isError);
        const ce = await t('callees', { path: top.path, line: top.startLine });
        assert.ok(!ce.isError);
        const rd = await t('read', { path: top.path, startLine: top.startLine, endLine: top.endLine });
        assert.ok(rd.structuredContent.text.length > 0);
        const a = await t('ask', { question: 'how are url rules matched', mode: 'extractive' });
        assert.ok(a.structuredContent.citations.length >= 1);
    } finally {
        await c.close();
    }
});

// Last: the server exits at end of input, and (built with sanitizers) says
// nothing about memory on its way out.
test('clean exit, no sanitizer report', async () => {
    await client.close();
    await stderrEnd;
    assert.doesNotMatch(stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
});
