-- Headless Neovim test of editors/nvim against the real server.
--   CODERAG_BIN=... CODERAG_WS=<copy of tests/fixtures/shop> CODERAG_INDEX_DIR=... \
--   nvim --headless -u NONE -i NONE --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_test.lua'
-- Prints one line per check and "nvim: N passed, N failed"; exits non-zero on failure.
local passed, failed = 0, 0
-- Time limits are last-resort bounds (a loaded one-core machine with a
-- sanitized server must never reach them): every wait ends on the state.
local LIMIT = 300000

local function check(cond, what, detail)
  if cond then
    passed = passed + 1
    io.stdout:write('ok   ' .. what .. '\n')
  else
    failed = failed + 1
    io.stdout:write('FAIL ' .. what .. (detail and (': ' .. tostring(detail)) or '') .. '\n')
  end
end

local function finish()
  io.stdout:write(string.format('nvim %s: %d passed, %d failed\n', tostring(vim.version and vim.version() and
    (vim.version().major .. '.' .. vim.version().minor .. '.' .. vim.version().patch) or '?'), passed, failed))
  io.stdout:flush()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  pcall(function() vim.lsp.stop_client(get()) end)
  vim.wait(LIMIT, function() return #get() == 0 end, 50)
  if failed > 0 then vim.cmd('cquit 1') else vim.cmd('qall!') end
end

local ok, err = xpcall(function()
  local bin = assert(os.getenv('CODERAG_BIN'), 'CODERAG_BIN')
  local ws = assert(os.getenv('CODERAG_WS'), 'CODERAG_WS')
  local index_dir = os.getenv('CODERAG_INDEX_DIR')
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  vim.cmd('filetype on')

  local coderag = require('coderag')
  coderag.setup({
    cmd = { bin, 'lsp' },
    root_dir = ws,
    init_options = { indexDir = index_dir, llm = { url = '' } },
    mode = 'extractive',
  })
  -- The filetype autocommand attaches the server.
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
  check(vim.bo.filetype == 'python', 'filetype python')
  local attached = vim.wait(LIMIT, function()
    local c = coderag.client(0)
    return c ~= nil and c.initialized == true
  end, 50)
  check(attached, 'server started and initialized')
  local client = coderag.client(0)
  check(client and client.name == 'coderag', 'client is coderag')
  if not client then error('no client: stopping') end

  -- Wait for the index.
  local state
  local ready = vim.wait(2 * LIMIT, function()
    local done = false
    coderag.status(function(e, s) state = (not e and s) and s.state or state; done = true end)
    vim.wait(LIMIT, function() return done end, 20)
    return state == 'ready'
  end, 100)
  check(ready, 'index ready', state)
  vim.wait(LIMIT, function() return coderag.progress ~= nil and coderag.progress.done end, 50)
  check(coderag.progress ~= nil and coderag.progress.title ~= nil and coderag.progress.title:lower():find('index') ~= nil,
    '$/progress "Indexing" seen', vim.inspect(coderag.progress))
  check(index_dir == nil or vim.loop.fs_stat(index_dir) ~= nil, 'indexDir from init_options used')
  if index_dir then check(vim.loop.fs_stat(ws .. '/.coderag') == nil, 'no index in the workspace') end

  -- :CodeRagAsk
  vim.api.nvim_win_set_cursor(0, { 36, 15 })
  local src_win = vim.api.nvim_get_current_win()
  coderag.last = nil
  vim.cmd('CodeRagAsk How is tax applied to an order total?')
  local answered = vim.wait(LIMIT, function() return coderag.last ~= nil end, 50)
  check(answered, ':CodeRagAsk answered')
  local result = coderag.last.result
  check(result.mode == 'extractive', 'extractive mode', result.mode)

  -- The floating window with the answer.
  local float
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then float = w end
  end
  check(float ~= nil, 'answer shown in a floating window')
  if float then
    local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), '\n')
    check(text:find('How is tax applied', 1, true) ~= nil, 'float shows the question')
    check(text:find('[shop/models.py:39-41] apply_tax', 1, true) ~= nil, 'float lists the apply_tax citation')
    -- <CR> on the citation line jumps there.
    local buf = vim.api.nvim_win_get_buf(float)
    local row
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:find('%[shop/models.py:39%-41%] apply_tax') then row = i end
    end
    vim.api.nvim_win_set_cursor(float, { row, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    check(not vim.api.nvim_win_is_valid(float), '<CR> closes the float')
    local cur = vim.api.nvim_win_get_cursor(0)
    check(vim.api.nvim_buf_get_name(0) == ws .. '/shop/models.py' and cur[1] == 39, '<CR> jumps to apply_tax',
      vim.api.nvim_buf_get_name(0) .. ':' .. cur[1])
  end
  vim.api.nvim_set_current_win(src_win)

  -- The quickfix list holds the verified citations.
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  check(qf.title == 'CodeRAG: How is tax applied to an order total?', 'quickfix title', qf.title)
  check(#qf.items == #result.citations and #qf.items > 0, 'one quickfix entry per citation', #qf.items)
  local all_match = true
  for i, item in ipairs(qf.items) do
    local c = result.citations[i]
    local fname = vim.api.nvim_buf_get_name(item.bufnr)
    local want = (type(c.symbol) == 'string' and c.symbol ~= '') and c.symbol or nil
    if fname ~= ws .. '/' .. c.path or item.lnum ~= c.startLine or item.end_lnum ~= c.endLine
        or (want and item.text ~= want) or (not want and not item.text:find('^module code')) then
      all_match = false
    end
  end
  check(all_match, 'quickfix entries match the citations (file, lines, symbol)')
  local tax, total
  for i, item in ipairs(qf.items) do
    if item.text == 'apply_tax' then tax = i end
    if item.text == 'Order.total' then total = i end
  end
  check(tax and vim.api.nvim_buf_get_name(qf.items[tax].bufnr) == ws .. '/shop/models.py'
    and qf.items[tax].lnum == 39 and qf.items[tax].end_lnum == 41, 'apply_tax at shop/models.py:39-41')
  check(total and qf.items[total].lnum == 34 and qf.items[total].end_lnum == 36, 'Order.total at shop/models.py:34-36')

  -- Walk them: :cfirst, then :cnext.
  vim.cmd('cfirst')
  local first = qf.items[1]
  check(vim.api.nvim_get_current_buf() == first.bufnr and vim.api.nvim_win_get_cursor(0)[1] == first.lnum,
    ':cfirst puts the cursor on the first citation', vim.api.nvim_win_get_cursor(0)[1])
  if #qf.items > 1 then
    vim.cmd('cnext')
    local second = qf.items[2]
    check(vim.api.nvim_get_current_buf() == second.bufnr and vim.api.nvim_win_get_cursor(0)[1] == second.lnum,
      ':cnext moves to the second citation')
  end
  if tax then
    vim.cmd('cc ' .. tax)
    check(vim.api.nvim_win_get_cursor(0)[1] == 39 and vim.api.nvim_get_current_line():find('^def apply_tax') ~= nil,
      ':cc lands on "def apply_tax"')
  end

  -- Code lenses through vim.lsp.codelens.
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  coderag.refresh_codelens(bufnr)
  local lenses
  vim.wait(LIMIT, function()
    lenses = vim.lsp.codelens.get(bufnr)
    for _, l in ipairs(lenses or {}) do
      if l.command and l.command.command == 'coderag.ask' then return true end
    end
    coderag.refresh_codelens(bufnr)
    return false
  end, 200)
  local ask_lens, cited_lens
  for _, l in ipairs(lenses or {}) do
    if l.command and l.command.command == 'coderag.ask' and l.range.start.line == 38 then ask_lens = l end
    if l.command and (l.command.title or ''):find('^cited for: ') then cited_lens = l end
  end
  check(ask_lens ~= nil, 'an "Ask CodeRAG" lens above apply_tax')
  check(cited_lens ~= nil, 'a "cited for" lens from the last answer')
  if ask_lens then
    -- What vim.lsp.codelens.run() calls for this lens.
    coderag.last = nil
    vim.lsp.commands['coderag.ask'](ask_lens.command, { bufnr = bufnr, client_id = client.id })
    vim.wait(LIMIT, function() return coderag.last ~= nil end, 50)
    local r = coderag.last and coderag.last.result
    local cites_tax = false
    for _, c in ipairs(r and r.citations or {}) do
      if c.path == 'shop/models.py' and c.startLine <= 39 and c.endLine >= 39 then cites_tax = true end
    end
    check(cites_tax, 'the lens question is answered with a citation of apply_tax')
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' then vim.api.nvim_win_close(w, true) end
    end
  end

  -- Hover (what K shows).
  local hparams = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = 35, character = 16 } }
  local hover
  if vim.fn.has('nvim-0.11') == 1 then
    hover = client:request_sync('textDocument/hover', hparams, LIMIT, bufnr)
  else
    hover = client.request_sync('textDocument/hover', hparams, LIMIT, bufnr)
  end
  local contents = hover and hover.result and hover.result.contents
  local htext = type(contents) == 'table' and (contents.value or vim.inspect(contents)) or tostring(contents)
  check(htext and htext:find('apply_tax') ~= nil, 'hover on apply_tax')
  check(vim.fn.maparg('K', 'n') ~= '', 'K is mapped')
end, debug.traceback)

if not ok then check(false, 'test script error', err) end
finish()
