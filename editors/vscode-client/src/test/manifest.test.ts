import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { settingsToInitOptions } from '../logic';

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const extensionJs = fs.readFileSync(path.join(root, 'out', 'extension.js'), 'utf8');

test('every command the extension registers is contributed, and the other way round', () => {
  const registered = [...extensionJs.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]).sort();
  const contributed = pkg.contributes.commands.map((c: any) => c.command);
  for (const id of registered) assert.ok(contributed.includes(id), `${id} contributed`);
  // coderag.reindex is the server's command, registered by vscode-languageclient.
  assert.deepEqual(contributed.filter((id: string) => !registered.includes(id)), ['coderag.reindex']);
  const titles = pkg.contributes.commands.map((c: any) => `${c.category}: ${c.title}`);
  assert.ok(titles.includes('CodeRAG: Ask About This Codebase'));
  assert.ok(titles.includes('CodeRAG: Show Citations'));
  // Typing "CodeRAG: Ask" + Enter runs Ask: no other command's title has a word starting "Ask".
  const ask = titles.filter((t: string) => /\bAsk/i.test(t.replace(/^CodeRAG: /, '')));
  assert.deepEqual(ask, ['CodeRAG: Ask About This Codebase']);
});

test('every setting can be edited in the settings UI: one plain type, no null default', () => {
  const props = pkg.contributes.configuration.properties;
  for (const [k, v] of Object.entries<any>(props)) {
    assert.equal(typeof v.type, 'string', `${k} has one type`);
    assert.notEqual(v.default, null, `${k} has a default that is not null`);
    if (v.type === 'string' && !v.enum) assert.equal(v.default, '', `${k}: "" is unset`);
  }
  // "" and 0 are unset: nothing reaches the server.
  assert.deepEqual(settingsToInitOptions((k) => props[`coderag.${k}`].default), { embed: { provider: 'builtin' } });
});

test('.coderag/ is hidden from the Explorer', () => {
  assert.equal(pkg.contributes.configurationDefaults['files.exclude']['**/.coderag'], true);
});

test('every forwarded setting is declared, and reaches initializationOptions', () => {
  const props = pkg.contributes.configuration.properties;
  const keys = Object.keys(props).map((k) => k.replace(/^coderag\./, ''));
  for (const k of ['server.path', 'llm.url', 'llm.model', 'llm.apiKeyEnv', 'embed.provider', 'embed.url',
    'embed.model', 'embed.apiKeyEnv', 'indexDir', 'exclude', 'mode']) {
    assert.ok(keys.includes(k), `coderag.${k} declared`);
  }
  // With every setting given a value, each llm.*/embed.* key and indexDir/exclude is sent.
  const sample = (k: string) => (props[`coderag.${k}`].type === 'array' ? ['x'] : 'v');
  const o: any = settingsToInitOptions(sample);
  assert.deepEqual(Object.keys(o.llm).sort(), ['apiKeyEnv', 'model', 'url']);
  assert.deepEqual(Object.keys(o.embed).sort(), ['apiKeyEnv', 'model', 'provider', 'url']);
  assert.equal(o.indexDir, 'v');
  assert.deepEqual(o.exclude, ['x']);
});

test('manifest: entry point, engine, activation', () => {
  assert.equal(pkg.main, './out/extension.js');
  assert.ok(fs.existsSync(path.join(root, pkg.main)));
  assert.match(pkg.engines.vscode, /^\^1\.\d+/);
  assert.ok(pkg.activationEvents.includes('onLanguage:python'));
  // A folder of any language the server reads starts it, with no file open (a Go folder too),
  // and so does any of its commands.
  const contains = pkg.activationEvents.find((e: string) => e.startsWith('workspaceContains:'));
  for (const ext of ['py', 'c', 'h', 'cc', 'cpp', 'hpp', 'go', 'rs', 'java', 'js', 'jsx', 'ts', 'tsx'])
    assert.match(contains, new RegExp(`[{,]${ext}[,}]`), `workspaceContains names .${ext}`);
  for (const c of pkg.contributes.commands)
    assert.ok(pkg.activationEvents.includes(`onCommand:${c.command}`), `onCommand:${c.command}`);
  assert.ok(pkg.dependencies['vscode-languageclient']);
});
