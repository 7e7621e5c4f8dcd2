-- Latencies seen by a real client (headless Neovim + editors/nvim) against the real server and
-- the loopback fake LLM: the first streamed words (fake's first content event -> the plugin's
-- partial-result handler), cancel (:CodeRagCancel -> the fake sees the LLM connection closed),
-- and an extractive ask while an LLM answer is held and three hovers are in flight.
-- Run through bench/editor_latency.sh; prints one line per measure (median and max, ms).
local N = tonumber(os.getenv('BENCH_N') or '10')
local ws = assert(os.getenv('CODERAG_WS'))
local coderag = require('coderag')

local function now() local s, us = vim.loop.gettimeofday(); return s + us / 1e6 end

local port
vim.fn.jobstart({ 'python3', assert(os.getenv('CODERAG_FAKE_LLM')), '--watch-stdin' }, {
  on_stdout = function(_, d) for _, l in ipairs(d) do if not port and l:match('^%d+$') then port = l end end end,
})
vim.wait(10000, function() return port ~= nil end, 10)
local url = 'http://127.0.0.1:' .. port
local function ctl(path, body)
  local out = vim.fn.system({ 'curl', '-s', '-X', 'POST', '--data-binary', '@-', url .. '/_control/' .. path },
    vim.fn.json_encode(body or vim.empty_dict()))
  local ok, v = pcall(vim.fn.json_decode, out)
  return ok and v or {}
end

vim.cmd('cd ' .. vim.fn.fnameescape(ws))
vim.cmd('filetype on')
coderag.setup({ cmd = { assert(os.getenv('CODERAG_BIN')), 'lsp' }, root_dir = ws, progress = false,
  init_options = { indexDir = os.getenv('CODERAG_INDEX_DIR'), llm = { url = url } } })
vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
vim.wait(20000, function() local c = coderag.client(0); return c and c.initialized end, 20)
local ready
vim.wait(60000, function()
  local got
  coderag.status(function(_, s) got = s end)
  vim.wait(5000, function() return got ~= nil end, 10)
  ready = got and got.state == 'ready'
  return ready
end, 50)

-- The time of the last event of `kind` in a /_control/wait answer.
local function event_t(ev, kind)
  local t
  for _, e in ipairs(ev.events or {}) do if e.kind == kind then t = e.t end end
  return t
end

local function stats(xs)
  table.sort(xs)
  return string.format('median %.1f ms, max %.1f ms (n=%d)', 1000 * xs[math.ceil(#xs / 2)], 1000 * xs[#xs], #xs)
end

local t_partial
vim.api.nvim_create_autocmd('User', { pattern = 'CodeRagPartial', callback = function()
  if not t_partial and coderag.pending and coderag.pending.text ~= '' then t_partial = now() end
  if os.getenv('BENCH_DEBUG') then io.stderr:write(string.format('partial %.3f text=%q\n', now(), coderag.pending and coderag.pending.text or '')) end
end })

local first, cancel, extractive = {}, {}, {}
for i = 1, N do
  -- First streamed words.
  ctl('reset', { actions = { chat = { { content = 'Tax is applied by apply_tax [{ctx0}].', chunk = 5, hold_after = 'r' } } } })
  t_partial = nil
  local done
  coderag.ask('How is tax applied to an order total?', { mode = 'llm', float = false, callback = function() done = true end })
  vim.wait(30000, function() return t_partial ~= nil end, 1)
  local ev = ctl('wait', { kind = 'first', count = 1, timeout_s = 30 })
  if os.getenv('BENCH_DEBUG') then io.stderr:write(vim.inspect(ctl('wait', { kind = 'start', count = 1, timeout_s = 1 })) .. vim.inspect(ev) .. '\n') end
  if t_partial and ev.ok and event_t(ev, 'first') then table.insert(first, t_partial - event_t(ev, 'first')) end
  -- An extractive ask and three hovers while that LLM answer is held.
  local params = { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = 35, character = 16 } }
  local client = coderag.client(0)
  for _ = 1, 3 do client.request('textDocument/hover', params, function() end, 0) end
  local t0, got = now(), nil
  client.request('coderag/ask', { question = 'How is the order total computed?', mode = 'extractive' },
    function() got = now() end, 0)
  vim.wait(30000, function() return got ~= nil end, 1)
  if got then table.insert(extractive, got - t0) end
  ctl('release', { name = 'r' })
  vim.wait(30000, function() return done end, 5)
  -- Cancel.
  ctl('reset', { actions = { chat = { { hold = 'never' } } } })
  coderag.ask('How is the order total computed?', { mode = 'llm', float = false })
  ctl('wait', { kind = 'start', count = 1, timeout_s = 30 })
  local tc = now()
  coderag.cancel()
  local closed = ctl('wait', { kind = 'closed', count = 1, timeout_s = 30 })
  if closed.ok and event_t(closed, 'closed') then table.insert(cancel, event_t(closed, 'closed') - tc) end
end
io.stdout:write('first streamed words, fake first token -> client: ' .. stats(first) .. '\n')
io.stdout:write('extractive ask with an LLM answer held and 3 hovers in flight: ' .. stats(extractive) .. '\n')
io.stdout:write('cancel -> LLM connection closed: ' .. stats(cancel) .. '\n')
vim.cmd('qall!')
