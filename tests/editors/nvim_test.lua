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
  if llm then pcall(vim.fn.jobstop, llm.job) end
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  pcall(function() vim.lsp.stop_client(get()) end)
  vim.wait(LIMIT, function() return #get() == 0 end, 50)
  if failed > 0 then vim.cmd('cquit 1') else vim.cmd('qall!') end
end


-- The loopback fake LLM (tests/fake_openai.py): started here, scripted through /_control.
local llm
local function start_fake_llm()
  local script = os.getenv('CODERAG_FAKE_LLM')
  if not script then return nil end
  local port
  local job = vim.fn.jobstart({ 'python3', script, '--watch-stdin' }, {
    on_stdout = function(_, data)
      for _, l in ipairs(data) do if not port and l:match('^%d+$') then port = l end end
    end,
  })
  vim.wait(LIMIT, function() return port ~= nil end, 20)
  if not port then return nil end
  return { job = job, url = 'http://127.0.0.1:' .. port, port = port }
end

local function llm_control(path, body)
  local out = vim.fn.system({ 'curl', '-s', '-X', 'POST', '--data-binary', '@-', llm.url .. '/_control/' .. path },
    vim.fn.json_encode(body or vim.empty_dict()))
  local okj, v = pcall(vim.fn.json_decode, out)
  return okj and v or nil
end

-- The text of line `lnum` of window `win` as displayed: concealed characters left out.
local function visible_line(win, lnum)
  local out = {}
  vim.api.nvim_win_call(win, function()
    local line = vim.fn.getline(lnum)
    local col = 1
    while col <= #line do
      local c = vim.fn.synconcealed(lnum, col)
      if c[1] == 0 then
        table.insert(out, line:sub(col, col))
      elseif c[2] ~= '' then
        table.insert(out, c[2])
      end
      col = col + 1
    end
  end)
  return table.concat(out)
end

local function float_wins()
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then table.insert(out, w) end
  end
  return out
end

local function close_floats()
  for _, w in ipairs(float_wins()) do pcall(vim.api.nvim_win_close, w, true) end
end

local function buf_text(win)
  return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
end

-- The chat panel's window, and the text of its last entry (the newest question).
local function panel() return require('coderag.ui').panel_win() end
local function last_entry()
  local st = require('coderag.ui').state
  local from = st.starts[#st.entries]
  if not from or not st.buf then return '' end
  return table.concat(vim.api.nvim_buf_get_lines(st.buf, from - 1, -1, false), '\n')
end
local function close_panel() require('coderag.ui').close() end

local ok, err = xpcall(function()
  local bin = assert(os.getenv('CODERAG_BIN'), 'CODERAG_BIN')
  local ws = assert(os.getenv('CODERAG_WS'), 'CODERAG_WS')
  local index_dir = os.getenv('CODERAG_INDEX_DIR')
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  vim.cmd('filetype on')

  vim.cmd('syntax on')
  vim.o.lines, vim.o.columns = 50, 120
  local coderag = require('coderag')
  llm = start_fake_llm()
  check(llm ~= nil, 'fake LLM started')
  coderag.setup({
    cmd = { bin, 'lsp' },
    root_dir = ws,
    init_options = { indexDir = index_dir, llm = { url = llm and llm.url or '' } },
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
  vim.wait(LIMIT, function() return coderag.progress_state.index ~= nil and coderag.progress_state.index.done end, 50)
  local ip = coderag.progress_state.index
  check(ip ~= nil and ip.title ~= nil and ip.title:lower():find('index') ~= nil,
    '$/progress "Indexing" seen', vim.inspect(ip))
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

  -- The chat panel with the answer: a split window, not a float.
  local float = panel()
  check(float ~= nil and vim.api.nvim_win_get_config(float).relative == '' and #float_wins() == 0,
    'answer shown in the chat panel (a split, no float)')
  if float then
    local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false), '\n')
    check(text:find('How is tax applied', 1, true) ~= nil, 'panel shows the question')
    check(text:find('[`shop/models.py:39-41`] `apply_tax`', 1, true) ~= nil, 'panel lists the apply_tax citation (in code spans)')
    -- <CR> on the citation line jumps there; the panel stays.
    local buf = vim.api.nvim_win_get_buf(float)
    local row
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:find('%[`shop/models.py:39%-41`%] `apply_tax`') then row = i end
    end
    vim.api.nvim_set_current_win(float)
    vim.api.nvim_win_set_cursor(float, { row, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    check(vim.api.nvim_win_is_valid(float) and vim.api.nvim_get_current_win() ~= float, '<CR> opens the citation beside the panel')
    local cur = vim.api.nvim_win_get_cursor(0)
    check(vim.api.nvim_buf_get_name(0) == ws .. '/shop/models.py' and cur[1] == 39, '<CR> jumps to apply_tax',
      vim.api.nvim_buf_get_name(0) .. ':' .. cur[1])
  end
  close_panel()
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
    close_panel()
    vim.api.nvim_set_current_win(src_win)
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

  -- Issue 11 #6: one root rule (nearest VCS root, else project marker, else the folder Neovim
  -- was opened in; a leftover .coderag/ is never a marker, a file's own folder never by accident).
  local root = require('coderag.root')
  local t = vim.fn.tempname()
  local function mk(p) vim.fn.mkdir(vim.fn.fnamemodify(t .. '/' .. p, ':h'), 'p'); vim.fn.writefile({ '' }, t .. '/' .. p) end
  mk('repo/pkg/sub/x.py'); vim.fn.mkdir(t .. '/repo/.git', 'p'); mk('repo/pkg/pyproject.toml')
  mk('proj/pyproject.toml'); mk('proj/pkg/mod/x.py')
  mk('plain/flask/app.py'); vim.fn.mkdir(t .. '/plain/flask/.coderag', 'p')
  mk('wt/.git'); mk('wt/a/b.py') -- a worktree: .git is a file
  mk('elsewhere/loose.py')
  check(root.find(t .. '/repo/pkg/sub/x.py', t) == t .. '/repo', 'root: the VCS root wins over a nested pyproject.toml')
  check(root.find(t .. '/proj/pkg/mod/x.py', t) == t .. '/proj', 'root: nearest project marker without VCS')
  check(root.find(t .. '/plain/flask/app.py', t .. '/plain') == t .. '/plain',
    'root: a leftover .coderag/ is not a marker; the opened folder, not the file\'s folder',
    root.find(t .. '/plain/flask/app.py', t .. '/plain'))
  check(root.find(t .. '/wt/a/b.py', t) == t .. '/wt', 'root: a .git file (worktree) is a VCS marker')
  local r, how = root.find(t .. '/elsewhere/loose.py', t .. '/plain')
  check(r == t .. '/elsewhere' and how == 'file', 'root: a file outside the opened folder says so')
  check(root.find('', t .. '/plain') == t .. '/plain', 'root: no file: the opened folder')

  -- #5: the statusline component shows one "%", in %{} and through the default statusline.
  local progress = require('coderag.progress')
  progress.ask = nil
  progress.update('index', { kind = 'begin', title = 'Indexing', percentage = 0 })
  progress.update('index', { kind = 'report', percentage = 34, message = '680/1984 files' })
  check(coderag.statusline() == 'CodeRAG Indexing 34% 680/1984 files', 'statusline component text', coderag.statusline())
  check(vim.o.statusline == progress.default_statusline, 'default statusline carries the component', vim.o.statusline)
  local sl = vim.api.nvim_eval_statusline(vim.o.statusline, { maxwidth = 200 }).str
  check(sl:find('Indexing 34% 680', 1, true) ~= nil and not sl:find('34%%', 1, true), 'statusline renders 34% (not 34%%)', sl)
  progress.update('index', { kind = 'end' })
  check(coderag.statusline() == '', 'statusline empty after the end')

  -- #5: :CodeRagStatus text while indexing names the files done, not "0 files, 0 chunks".
  local render = require('coderag.render')
  local st = render.status_text({ state = 'indexing', files = 0, chunks = 0, indexed = 812, total = 1984,
    message = 'ws: indexing, 812/1984 files', roots = { { root = '/w', state = 'indexing', indexed = 812, total = 1984, files = 0 } } })
  check(st == 'indexing 812/1984 files (40%) — /w', ':CodeRagStatus while indexing', st)
  local real
  coderag.status(function(_, s) real = s end)
  vim.wait(LIMIT, function() return real ~= nil end, 20)
  check(real and render.status_text(real):find('^ready: %d+ files, %d+ chunks') ~= nil, ':CodeRagStatus when ready',
    real and render.status_text(real))

  -- #7: paths in code spans so markdown cannot eat underscores; the panel wraps between words.
  close_panel()
  local long = string.rep('word ', 70)
  local straddling = string.rep('reloader ', 30) -- 9 columns: a row of 58 ends inside one
  local fake = {
    answer = 'The reloader lives in werkzeug/_reloader.py [werkzeug/_reloader.py:10-20] and ' ..
      'flask/__init__.py exports `make_response`; see __init__.py, called from **Order.total** with (*args, **kwargs).\n\n**`werkzeug/__init__.py`**\n\n' .. long .. '\n\n' .. straddling ..
      '\n\nIt reads nums\\[i\\] (see http://example.org/a_b/c and https://x.org/d.)\n\n' ..
      'Totals: `shop/models.py:34-36` and (shop/models.py:39).\n\n' ..
      "Avoids problems with 'double*' here.\n\nThen `late_code` stays code.\n\nAnd lua_State *L here; **bold** and *this*.\n\nLast line.",
    citations = { { uri = vim.uri_from_fname(ws .. '/shop/models.py'), path = 'werkzeug/_reloader.py',
      startLine = 10, endLine = 20, symbol = 'run_with_reloader' },
      { path = 'shop/models.py', startLine = 39, endLine = 41, symbol = 'apply_tax', source = 'auto' } },
    rejected = { { text = '[werkzeug/_gone.py:1-2]', reason = 'file-not-found' } },
    context = { { path = 'shop/models.py', startLine = 34, endLine = 36, symbol = 'Order.total', score = 0.31, via = { 'bm25' } },
      { path = 'werkzeug/_reloader.py', startLine = 1, endLine = 40, symbol = 'run_with_reloader',
      score = 0.92, via = { 'bm25', 'dense' } },
      { path = 'shop/models.py', startLine = 39, endLine = 41, symbol = 'apply_tax', score = 0.55, via = { 'dense' } } },
    mode = 'llm', match = 'strong',
  }
  coderag.config.panel.width = 60
  local ui = require('coderag.ui')
  ui.clear(coderag)
  local fw = ui.show(coderag, { question = 'Where is the reloader?', result = fake, root = ws })
  vim.cmd('redraw')
  local shown = {}
  local nlines = vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(fw))
  for l = 1, nlines do table.insert(shown, visible_line(fw, l)) end
  shown = table.concat(shown, '\n')
  check(shown:find('werkzeug/_reloader.py', 1, true) ~= nil, 'panel shows werkzeug/_reloader.py with its underscore', shown)
  check(shown:find('flask/__init__.py', 1, true) ~= nil and select(2, shown:gsub('__init__%.py', '')) >= 3,
    'panel shows __init__.py with its underscores')
  check(shown:find('make_response', 1, true) ~= nil, 'panel keeps code spans')
  check(shown:find('`**O', 1, true) == nil and shown:find('*args', 1, true) ~= nil, 'bold stays bold, *args is code', shown)
  -- Issue 27: markdown escapes and URLs read as written.
  check(shown:find('reads nums[i] (see http://example.org/a_b/c and https://x.org/d.)', 1, true) ~= nil,
    'escapes dropped (nums[i]) and URLs whole', shown:match('reads[^\n]*'))
  -- A star touching a word ('double*', *L) does not open an emphasis that swallows what follows.
  do
    local row, col
    for i, l in ipairs(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(fw), 0, -1, false)) do
      local c = l:find('late_code', 1, true)
      if c then row, col = i, c end
    end
    local names = {}
    for _, id in ipairs(row and vim.fn.synstack(row, col) or {}) do table.insert(names, vim.fn.synIDattr(id, 'name')) end
    check(row and table.concat(names, ' '):find('markdownCode', 1, true) and not table.concat(names, ' '):find('Italic', 1, true),
      "a lone star ('double*', *L) opens no emphasis: a later code span stays code", table.concat(names, ' '))
    check(shown:find('**bold**', 1, true) == nil and shown:find('bold', 1, true) ~= nil, 'bold and emphasis pairs stay markup')
  end
  -- A lone backtick or an open fence (an answer cut short) does not run over the next answer.
  do
    local b = vim.api.nvim_win_get_buf(fw)
    ui.show(coderag, { question = 'cut short', result = { answer = 'A lone ` backtick.\n\n```python\nx = 1', citations = {} }, root = ws })
    ui.show(coderag, { question = 'next', result = { answer = 'Then `next_code` here.', citations = {} }, root = ws })
    local row, col
    for i, l in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, false)) do
      local c = l:find('next_code', 1, true)
      if c then row, col = i, c end
    end
    -- the backtick before next_code opens a code span (inside a run-on fence it is plain code)
    local names = {}
    for _, id in ipairs(row and vim.fn.synstack(row, col - 1) or {}) do table.insert(names, vim.fn.synIDattr(id, 'name')) end
    check(row and names[#names] == 'markdownCodeDelimiter',
      'an answer cut short (lone backtick, open fence) leaves the next answer intact', table.concat(names, ' '))
    table.remove(ui.state.entries); table.remove(ui.state.entries)
    ui.show_panel(coderag)
    fw = ui.panel_win()
  end
  -- Issue 27: a source "auto" citation is the server's pick, not "verified".
  check(shown:find("Citations (1 verified, 1 the server's pick)", 1, true) ~= nil
    and shown:find("`apply_tax` (the server's pick: the answer cited nothing)", 1, true) ~= nil
    or shown:find("apply_tax (the server's pick: the answer cited nothing)", 1, true) ~= nil,
    "a source auto citation is labelled the server's pick", shown:match('## Citations[^\n]*'))
  check(fw and vim.api.nvim_win_get_config(fw).relative == '' and vim.wo[fw].wrap and vim.wo[fw].linebreak,
    'the panel is a split with wrap and linebreak (nothing cut with @@@)')
  -- #8: rows break between words (linebreak).
  local fbuf = vim.api.nvim_win_get_buf(fw)
  local split = {}
  vim.api.nvim_win_set_cursor(fw, { 1, 0 })
  for l, text in ipairs(vim.api.nvim_buf_get_lines(fbuf, 0, -1, false)) do
    local from = 1
    while true do
      local a, b = text:find('reloader', from, true)
      if not a then break end
      vim.api.nvim_win_set_cursor(fw, { l, 0 })
      vim.cmd('redraw')
      local ra, rb = vim.fn.screenpos(fw, l, a).row, vim.fn.screenpos(fw, l, b).row
      if ra ~= rb or ra == 0 then table.insert(split, l .. ':' .. a .. ' rows ' .. ra .. '-' .. rb) end
      from = b + 1
    end
  end
  check(vim.wo[fw].linebreak and #split == 0, 'panel wraps between words, never inside one', table.concat(split, ', '))
  -- the row count against Neovim's own layout: words at the edge, long words, tabs, wide characters
  do
    local words = { 'a', 'word', 'werkzeug/_reloader.py', '[shop/models.py:10-20]', 'x,y', 'foo-bar', 'tab\tx',
      '\t\tindent', 'longlonglonglonglonglonglonglonglonglongword', '`make_response`', 'é', '漢字', '(*args,' }
    local sbuf = vim.api.nvim_create_buf(false, true)
    local seed, wrong = 7, {}
    local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n + 1 end
    for _, w in ipairs({ 5, 9, 16, 23, 40, 57 }) do
      local sw = vim.api.nvim_open_win(sbuf, false, { relative = 'editor', width = w, row = 0, col = 0,
        height = math.max(vim.o.lines - 4, 5), style = 'minimal' })
      vim.wo[sw].wrap, vim.wo[sw].linebreak = true, true
      for _ = 1, 12 do
        local parts = {}
        for _ = 1, rnd(8) do
          table.insert(parts, words[rnd(#words)])
          table.insert(parts, ({ ' ', ' ', '  ', ', ', '' })[rnd(5)])
        end
        local text = table.concat(parts)
        vim.api.nvim_buf_set_lines(sbuf, 0, -1, false, { text, 'end' })
        vim.cmd('redraw')
        local real = vim.fn.screenpos(sw, 2, 1).row - vim.fn.screenpos(sw, 1, 1).row
        local est = render.wrapped_height({ text }, w, vim.bo[sbuf].tabstop)
        if real <= 0 or real ~= est then table.insert(wrong, string.format('%d cols %q: %d rows, counted %d', w, text, real, est)) end
      end
      vim.api.nvim_win_close(sw, true)
    end
    vim.api.nvim_buf_delete(sbuf, { force = true })
    check(#wrong == 0, 'wrapped_height counts the rows Neovim lays out with linebreak', table.concat(wrong, '; '))
  end
  -- Rejected citations are struck out.
  local struck = false
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(vim.api.nvim_win_get_buf(fw), vim.api.nvim_get_namespaces().coderag, 0, -1, { details = true })) do
    local line = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(fw), m[2], m[2] + 1, false)[1]
    if m[4].hl_group == 'CodeRagRejected' and line:find('werkzeug/_gone.py', 1, true) then struck = true end
  end
  check(struck, 'a rejected citation is highlighted CodeRagRejected')
  local hl = vim.api.nvim_get_hl_by_name('CodeRagRejected', true)
  check(hl.strikethrough == true, 'CodeRagRejected is struck through')
  -- The context the answer used: c toggles it, sorted by score, and puts it in view.
  vim.api.nvim_set_current_win(fw)
  vim.api.nvim_win_set_cursor(fw, { 1, 0 })
  vim.api.nvim_feedkeys('c', 'x', false)
  check(buf_text(fw):find('0.92 `werkzeug/_reloader.py:1-40` `run_with_reloader` via bm25+dense', 1, true) ~= nil,
    'c shows the context with score and via', buf_text(fw))
  local ctx_text = buf_text(fw):match('## Context.*') or ''
  local s1, s2, s3 = ctx_text:find('0.92', 1, true), ctx_text:find('0.55', 1, true), ctx_text:find('0.31', 1, true)
  check(s1 and s2 and s3 and s1 < s2 and s2 < s3, 'context listed by the score it shows', ctx_text)
  local top = vim.fn.line('w0', fw)
  check(vim.api.nvim_buf_get_lines(fbuf, top - 1, top, false)[1]:find('^## Context') ~= nil
    and vim.api.nvim_get_current_win() == fw, 'c scrolls the context into view (its heading at the top)',
    vim.api.nvim_buf_get_lines(fbuf, top - 1, top, false)[1])
  -- Issue 27: <CR> opens every citation form shown: `path:a-b`, (path:a), a context row.
  local function cr_on(pattern)
    local row, col
    for i, l in ipairs(vim.api.nvim_buf_get_lines(fbuf, 0, -1, false)) do
      local at = l:find(pattern)
      if at and not row then row, col = i, at end
    end
    if not row then return 'no line ' .. pattern end
    vim.api.nvim_set_current_win(fw)
    vim.api.nvim_win_set_cursor(fw, { row, col + 2 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    local got = vim.api.nvim_buf_get_name(0) .. ':' .. vim.api.nvim_win_get_cursor(0)[1]
    vim.api.nvim_set_current_win(fw)
    return got
  end
  check(cr_on('`shop/models%.py:34%-36`') == ws .. '/shop/models.py:34', '<CR> on `path:a-b` in the text', cr_on('`shop/models%.py:34%-36`'))
  check(cr_on('%(`?shop/models%.py`?:39%)') == ws .. '/shop/models.py:39', '<CR> on (path:a) in the text', cr_on('%(`?shop/models%.py`?:39%)'))
  check(cr_on('0%.31 `shop') == ws .. '/shop/models.py:34', '<CR> on a context row', cr_on('0%.31 `shop'))
  check(ui.panel_win() == fw, 'the panel stays open after <CR>')
  close_panel()
  coderag.config.panel.width = nil
  vim.api.nvim_set_current_win(src_win)
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))

  -- #2: progress from the first moment, streaming, the verified answer replacing the text.
  local msgs = {}
  vim.api.nvim_create_autocmd('User', { pattern = 'CodeRagProgress', callback = function()
    if progress.ask then table.insert(msgs, progress.ask.message or '') end
  end })
  -- The fake LLM sends its first words, then holds the rest until released.
  llm_control('reset', { actions = { chat = { { content = 'Tax is applied by apply_tax [{ctx0}] and not here [shop/nowhere.py:1-2].',
    chunk = 5, hold_after = 'rest' } } } })
  local got
  coderag.ask('How is tax applied to an order total?', { mode = 'llm', callback = function(e, r) got = { e = e, r = r } end })
  local p = coderag.pending
  check(p ~= nil and panel() and last_entry():find('asking', 1, true) ~= nil,
    'the panel shows the question at once with progress, before any reply')
  check(coderag.statusline():find('^CodeRAG') ~= nil, 'the statusline shows the question at once', coderag.statusline())
  check(vim.wait(LIMIT, function() return last_entry():find('Provisional', 1, true) ~= nil end, 20),
    'the first words are shown, provisional, while the LLM is still writing')
  check(got == nil and (p.partials or 0) >= 1 and p.text:find('Tax i', 1, true) ~= nil, 'partial results, no result yet',
    (p.partials or 0) .. ' partials, text ' .. tostring(p.text))
  check(coderag.statusline():find('writing', 1, true) ~= nil, 'the statusline shows the writing', coderag.statusline())
  -- the user goes back to the code while the answer is written: the answer does not take the focus
  local code_win = vim.fn.win_getid(vim.fn.winnr('#'))
  vim.api.nvim_set_current_win(code_win)
  llm_control('release', { name = 'rest' })
  vim.wait(LIMIT, function() return got ~= nil end, 20)
  check(vim.api.nvim_get_current_win() == code_win, 'the finished answer leaves the cursor where the user went')
  check(got and got.r and got.r.mode == 'llm', 'llm answer', got and (got.e and vim.inspect(got.e) or got.r.mode))
  local saw_server = false
  for _, m in ipairs(msgs) do if m == 'retrieving' or m:find('writing', 1, true) or m:find('found', 1, true) then saw_server = true end end
  check(saw_server, 'work-done progress from the server on the question\'s token', table.concat(msgs, ' | '))
  local ft = last_entry()
  check(ft:find('Provisional', 1, true) == nil and ft:find('Tax is applied', 1, true) ~= nil,
    'the verified answer replaced the provisional text')
  check(got and got.r and #(got.r.rejected or {}) >= 1 and ft:find('shop/nowhere.py', 1, true) ~= nil,
    'the rejected citation is listed (struck out) under the answer')
  check(coderag.statusline() == '', 'statusline empty once answered', coderag.statusline())

  -- Issue 27: a follow-up is appended under the earlier answer in the same panel.
  local n_entries = #require('coderag.ui').state.entries
  check(n_entries >= 2 and buf_text(panel()):find('How is tax applied to an order total?', 1, true) ~= nil,
    'the panel keeps the conversation: earlier answers stay above', n_entries)

  -- #2: cancel sends $/cancelRequest; the server stops the LLM request.
  llm_control('reset', { actions = { chat = { { hold = 'never' } } } })
  got = nil
  coderag.ask('How is the order total computed?', { mode = 'llm', callback = function(e, r) got = { e = e, r = r } end })
  check((llm_control('wait', { kind = 'start', count = 1, timeout_s = 300 }) or {}).ok == true, 'the LLM request started')
  vim.cmd('CodeRagCancel')
  check(got and got.e and got.e.code == -32800, 'the question ends as RequestCancelled (-32800) at once', got and vim.inspect(got.e))
  check(vim.wait(LIMIT, function() return progress.ask and progress.ask.done and progress.ask.message == 'cancelled' end, 20),
    'the server acknowledged: its progress ended "cancelled"', vim.inspect(progress.ask))
  check((llm_control('wait', { kind = 'closed', count = 1, timeout_s = 300 }) or {}).ok == true, 'the server closed the LLM connection')
  check(last_entry():find('Cancelled.', 1, true) ~= nil, 'the panel says Cancelled.')
  check(coderag.pending == nil and coderag.statusline() == '', 'nothing pending after the cancel')
  llm_control('reset', {})

  -- History, follow-up with the previous turn, reopening.
  local n = #coderag.history
  check(n >= 2 and coderag.last == coderag.history[n], 'answers are kept in the history', n)
  local params = coderag.ask_params('And where is it called?', { followup = true }, vim.api.nvim_get_current_buf())
  check(params.history and params.history[#params.history].question == coderag.last.question
    and params.history[#params.history].answer == coderag.last.result.answer, 'a follow-up carries the previous turn (history)')
  got = nil
  vim.cmd('CodeRagFollowup And where is it called?')
  vim.wait(LIMIT, function() return got == nil and coderag.pending == nil end, 20)
  check(#coderag.history == n + 1 and coderag.last.question == 'And where is it called?', 'the follow-up is answered')
  check(#require('coderag.ui').state.entries == n_entries + 2 and last_entry():find('^# And where is it called%?') ~= nil,
    'the follow-up is appended to the panel', #require('coderag.ui').state.entries)
  local orig_select = vim.ui.select
  vim.ui.select = function(items, _, on_choice) on_choice(items[2]) end
  vim.cmd('CodeRagHistory')
  vim.ui.select = orig_select
  check(last_entry():find('# ' .. coderag.history[n].question, 1, true) ~= nil,
    ':CodeRagHistory reopens an earlier answer')
  vim.cmd('CodeRagContext')
  check(last_entry():find('## Context the answer used', 1, true) ~= nil
    and last_entry():find(' via ', 1, true) ~= nil, ':CodeRagContext shows scores and via')

  -- Issue 27: this workspace's answers are kept across restarts (a JSON file under stdpath('data')).
  do
    local history = require('coderag.history')
    local file = history.file(coderag.config.history_dir, ws)
    check(vim.loop.fs_stat(file) ~= nil, 'the answers are saved under stdpath("data")', file)
    local before = {}
    for _, h in ipairs(coderag.workspace_history(ws)) do table.insert(before, h.question) end
    coderag.history, coderag.history_loaded, coderag.last = {}, {}, nil
    coderag.load_history(ws)
    local after = {}
    for _, h in ipairs(coderag.workspace_history(ws)) do table.insert(after, h.question) end
    check(#before > 0 and vim.deep_equal(before, after), 'after a restart the workspace\'s answers are read back',
      #before .. ' saved, ' .. #after .. ' read')
    check(#coderag.workspace_history('/some/other/root') == 0, 'another workspace has its own history')
    check(coderag.last ~= nil and coderag.last.question == before[#before], 'the last answer is the last saved one')
    close_panel()
    require('coderag.ui').clear(coderag)
    vim.api.nvim_set_current_win(src_win)
    vim.cmd('CodeRagChat')
    check(panel() and #require('coderag.ui').state.entries == math.min(3, #before)
      and last_entry():find('# ' .. before[#before], 1, true) ~= nil, ':CodeRagChat after a restart shows the workspace\'s last answers',
      #require('coderag.ui').state.entries)
  end
  close_panel()

  -- #4: nothing relevant: the first line says so and is shown as a warning.
  got = nil
  coderag.ask('How is the GPU kernel scheduled?', { callback = function(e, r) got = { e = e, r = r } end })
  vim.wait(30000, function() return got ~= nil end, 20)
  check(got and got.r and got.r.match == 'none', 'an off-topic question has match none', got and got.r and got.r.match)
  local warned = false
  if panel() then
    local b = vim.api.nvim_win_get_buf(panel())
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, vim.api.nvim_get_namespaces().coderag, 0, -1, { details = true })) do
      local line = vim.api.nvim_buf_get_lines(b, m[2], m[2] + 1, false)[1]
      if m[4].hl_group == 'WarningMsg' and line:find('Nothing relevant found', 1, true) then warned = true end
    end
  end
  check(warned, 'its first line "Nothing relevant found" is shown as a warning')
  close_panel()

  -- Explain with the LLM (coderag.explain), streamed like a question.
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
  vim.api.nvim_win_set_cursor(0, { 39, 5 })
  local n_hist = #coderag.history
  coderag.explain()
  vim.wait(30000, function() return coderag.pending == nil end, 20)
  check(#coderag.history == n_hist + 1 and coderag.last.question:find('apply_tax', 1, true) ~= nil
    and coderag.last.result.mode == 'llm', ':CodeRagExplain answers about apply_tax with the LLM',
    coderag.last and coderag.last.question)
  close_panel()

  -- Issue 27: a failed question (here: explain's error path) ends with one echoed line, no
  -- hit-enter prompt: the error is in the panel, not in a second message.
  do
    local echoed = {}
    local orig_echo, orig_n = vim.api.nvim_echo, vim.notify
    vim.api.nvim_echo = function(chunks, ...) table.insert(echoed, chunks[1] and chunks[1][1] or '') return orig_echo(chunks, ...) end
    vim.notify = function(m) table.insert(echoed, m) end
    local fin
    coderag.start_request(coderag.client(0), 'workspace/executeCommand', { command = 'coderag.explain', arguments = { {} } },
      'Explain nothing', { callback = function(e) fin = e end }, vim.api.nvim_get_current_buf())
    vim.wait(LIMIT, function() return fin ~= nil end, 20)
    vim.api.nvim_echo, vim.notify = orig_echo, orig_n
    local after = {}
    for _, m in ipairs(echoed) do if not m:find('asking', 1, true) then table.insert(after, m) end end
    check(fin ~= nil and #after <= 1 and last_entry():find('Error:', 1, true) ~= nil,
      'a failed question: the panel shows the error, at most one echo line', vim.inspect(echoed))
    close_panel()
  end

  -- Issue 27: a code action offers Explain (with an LLM configured).
  do
    local bufnr = vim.api.nvim_get_current_buf()
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      range = { start = { line = 38, character = 5 }, ['end'] = { line = 38, character = 5 } }, context = { diagnostics = {} } }
    local r = coderag.client(0).request_sync('textDocument/codeAction', params, LIMIT, bufnr)
    local acts = r and r.result or {}
    check(acts[1] and acts[1].command and acts[1].command.command == 'coderag.explain',
      'textDocument/codeAction offers "Explain ... with the LLM"', vim.inspect(acts))
    -- and Neovim's own menu (vim.lsp.buf.code_action) lists it
    local offered
    local orig_select = vim.ui.select
    vim.ui.select = function(items, o, on_choice)
      offered = {}
      for _, it in ipairs(items) do table.insert(offered, o.format_item and o.format_item(it) or vim.inspect(it)) end
      on_choice(nil)
    end
    vim.api.nvim_win_set_cursor(0, { 39, 5 })
    vim.lsp.buf.code_action()
    vim.wait(LIMIT, function() return offered ~= nil end, 20)
    vim.ui.select = orig_select
    check(offered and table.concat(offered, '|'):find('Explain `apply_tax` with the LLM', 1, true) ~= nil,
      'vim.lsp.buf.code_action() offers Explain', vim.inspect(offered))
  end

  -- Issue 27: running a count lens ("2 callers, ...") lists the callers in the quickfix list.
  do
    vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
    local bufnr = vim.api.nvim_get_current_buf()
    coderag.refresh_codelens(bufnr)
    local count
    vim.wait(LIMIT, function()
      for _, l in ipairs(vim.lsp.codelens.get(bufnr) or {}) do
        if l.command and l.command.command == '' and l.range.start.line == 38 and (l.command.title or ''):find('^%d+ caller') then count = l end
      end
      if not count then coderag.refresh_codelens(bufnr) end
      return count ~= nil
    end, 200)
    check(count ~= nil, 'a callers lens above apply_tax', count and count.command.title)
    if count then
      vim.api.nvim_win_set_cursor(0, { 39, 0 })
      coderag.last_callers = nil
      local orig_select = vim.ui.select
      vim.ui.select = function(items, _, on_choice)
        for _, it in ipairs(items) do
          if it.lens and (it.lens.command.title or ''):find('^%d+ caller') then return on_choice(it) end
        end
        on_choice(items[1])
      end
      vim.lsp.codelens.run()
      vim.ui.select = orig_select
      vim.wait(LIMIT, function() return coderag.last_callers ~= nil end, 20)
      local qf = vim.fn.getqflist({ title = 1, items = 1 })
      local from_total = false
      for _, it in ipairs(qf.items) do
        if vim.api.nvim_buf_get_name(it.bufnr) == ws .. '/shop/models.py' and it.text == 'total'
          and it.lnum >= 34 and it.lnum <= 36 then from_total = true end
      end
      check(coderag.last_callers and qf.title == 'CodeRAG: callers of apply_tax' and from_total,
        'running the callers lens lists the callers (Order.total calls apply_tax)', vim.inspect(qf))
      vim.cmd('cclose')
    end
  end

  -- Issue 27: :CodeRagAsk without an argument prompts (vim.ui.input).
  do
    local orig_input, prompted = vim.ui.input, nil
    vim.ui.input = function(o, on_confirm) prompted = o.prompt; on_confirm('Where is apply_tax defined?') end
    coderag.last = nil
    vim.cmd('CodeRagAsk')
    vim.ui.input = orig_input
    vim.wait(LIMIT, function() return coderag.last ~= nil end, 20)
    check(prompted ~= nil and coderag.last and coderag.last.question == 'Where is apply_tax defined?',
      ':CodeRagAsk with no argument prompts for the question', prompted)
    close_panel()
  end

  -- Issue 27: with another hover server attached (a second server standing in for pylsp), K
  -- shows one float and a second K focuses it; coderag's hover is kept for :CodeRagHover.
  do
    vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
    local bufnr = vim.api.nvim_get_current_buf()
    local other = vim.lsp.start_client({ name = 'otherls', cmd = { bin, 'lsp' }, root_dir = ws,
      init_options = { indexDir = index_dir } })
    vim.lsp.buf_attach_client(bufnr, other)
    vim.wait(LIMIT, function() local c = vim.lsp.get_client_by_id(other); return c and c.initialized end, 50)
    local replies = 0
    local orig_h = vim.lsp.handlers['textDocument/hover']
    vim.lsp.handlers['textDocument/hover'] = function(...) replies = replies + 1; return orig_h(...) end
    coderag.last_hover = nil
    local src = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_cursor(src, { 36, 16 })
    vim.lsp.buf.hover()
    vim.wait(LIMIT, function() return replies >= 1 and coderag.last_hover ~= nil end, 20)
    vim.lsp.handlers['textDocument/hover'] = orig_h
    check(#float_wins() == 1 and vim.api.nvim_get_current_win() == src and replies == 1,
      'K with two hover servers: one float, the cursor stays in the buffer', #float_wins() .. ' floats, ' .. replies .. ' shown')
    vim.lsp.buf.hover()
    vim.wait(LIMIT, function() return vim.api.nvim_get_current_win() ~= src end, 20)
    check(vim.api.nvim_win_get_config(vim.api.nvim_get_current_win()).relative ~= '', 'a second K focuses the float')
    vim.api.nvim_set_current_win(src)
    close_floats()
    -- the plugin's K: both servers' hovers in one float; a second K focuses it
    check(vim.fn.maparg('K', 'n'):find('hover_all', 1, true) ~= nil or vim.fn.maparg('K', 'n') ~= '', 'K is mapped')
    coderag.hover_all(bufnr)
    vim.wait(LIMIT, function() return #float_wins() == 1 end, 20)
    local ftext = float_wins()[1] and buf_text(float_wins()[1]) or ''
    local _, copies = ftext:gsub('apply_tax', '')
    check(#float_wins() == 1 and vim.api.nvim_get_current_win() == src and (ftext:find('\n%-%-%-\n') ~= nil or ftext:find('─', 1, true) ~= nil) and copies >= 2,
      "the plugin's K: every server's hover in one float", ftext:sub(1, 300))
    coderag.hover_all(bufnr)
    vim.wait(LIMIT, function() return vim.api.nvim_get_current_win() ~= src end, 20)
    check(vim.api.nvim_win_get_config(vim.api.nvim_get_current_win()).relative ~= '', "a second press of the plugin's K focuses it")
    vim.api.nvim_set_current_win(src)
    close_floats()
    vim.lsp.stop_client(other)
    vim.wait(LIMIT, function() return vim.lsp.get_client_by_id(other) == nil end, 50)
  end

  -- Issue 27: unsaved edits: Neovim sends didChange (the server declares full sync) and flushes
  -- it before a request; the answer sees the edit once the server's overlay (helper srv) lands.
  do
    vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
    local bufnr = vim.api.nvim_get_current_buf()
    local sync = coderag.client(0).server_capabilities.textDocumentSync
    check(type(sync) == 'table' and sync.openClose and sync.change == 1, 'the server asks for didOpen and full didChange', vim.inspect(sync))
    vim.api.nvim_buf_set_lines(bufnr, -1, -1, false, { '', '', 'def zebra_discount_rate(order):',
      '    """The zebra discount applied to striped orders."""', '    return 0.42' })
    if not os.getenv('CODERAG_TEST_UNSAVED') then
      io.stdout:write("skip the answer sees the unsaved edit: the server's didChange overlay (helper srv) has not landed; set CODERAG_TEST_UNSAVED=1 once it has\n")
    else
      coderag.last = nil
      coderag.ask('What is the zebra discount rate of striped orders?', { mode = 'extractive', bufnr = bufnr })
      vim.wait(LIMIT, function() return coderag.last ~= nil end, 20)
      local seen = false
      for _, c in ipairs(coderag.last and coderag.last.result.citations or {}) do
        if c.symbol == 'zebra_discount_rate' then seen = true end
      end
      check(seen, 'the answer sees the unsaved edit', coderag.last and coderag.last.result.answer)
      close_panel()
    end
    vim.cmd('silent! edit!')
  end

  -- Issue 27: an answer given while the index is being built says so first, and is asked again
  -- (replacing it in the panel) when indexing ends. The server's `indexing: true` is set on the
  -- reply here: the fixture indexes too fast to ask in between.
  do
    vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
    local client0 = coderag.client(0)
    local orig, flip = client0.request, true
    client0.request = function(method, params, handler, b)
      return orig(method, params, function(e, r, ...)
        if method == 'coderag/ask' and r and flip then r.indexing, flip = true, false end
        return handler(e, r, ...)
      end, b)
    end
    local ui = require('coderag.ui')
    ui.clear(coderag)
    local n_hist = #coderag.history
    coderag.ask('How is tax applied to an order total?', { mode = 'extractive' })
    vim.wait(LIMIT, function() return #coderag.history == n_hist + 1 end, 20)
    local first = last_entry()
    check(first:find('^# How is tax applied[^\n]*\n\nThe index is still being built') ~= nil and coderag.reask ~= nil,
      'an answer during indexing says so first', first:sub(1, 200))
    for _, v in ipairs({ { kind = 'begin', title = 'Indexing ws' }, { kind = 'end', message = '5 files' } }) do
      coderag.on_progress(nil, { token = 'coderag/index/test', value = v }, { client_id = client0.id, method = '$/progress' })
    end
    vim.wait(LIMIT, function() return #coderag.history == n_hist + 2 end, 20)
    client0.request = orig
    check(#coderag.history == n_hist + 2 and #ui.state.entries == 1 and not last_entry():find('still being built', 1, true)
      and last_entry():find('apply_tax', 1, true) ~= nil, 'when indexing ends the question is asked again, the answer replaced',
      #ui.state.entries .. ' entries: ' .. last_entry():sub(1, 120))
    close_panel()
  end

  -- Issue 27: an already indexed workspace does not say "Indexing" on open.
  do
    local echoed = {}
    local orig_echo = vim.api.nvim_echo
    vim.api.nvim_echo = function(chunks, ...) table.insert(echoed, chunks[1] and chunks[1][1] or '') return orig_echo(chunks, ...) end
    progress.update('index', { kind = 'begin', title = 'Indexing ws', message = 'scanning', percentage = 0 })
    progress.update('index', { kind = 'end', message = '5 files, 21 chunks' })
    vim.api.nvim_echo = orig_echo
    local said = table.concat(echoed, ' | ')
    check(not said:find('Indexing', 1, true) and said:find('ws: 5 files', 1, true), 'a quick check of the index is not "Indexing"', said)
  end

  -- #8 (Neovim side): a missing binary gives one clear message, no stack trace.
  local notes = {}
  local orig_notify = vim.notify
  vim.notify = function(m) table.insert(notes, m) end
  local saved = coderag.config.cmd
  coderag.config.cmd = { '/nonexistent/coderag', 'lsp' }
  coderag.missing_told = nil
  vim.cmd('edit ' .. vim.fn.fnameescape(t .. '/proj/pkg/mod/x.py'))
  coderag.config.cmd = saved
  vim.notify = orig_notify
  check(#notes == 1 and notes[1]:find('not an executable', 1, true) ~= nil, 'missing binary: one clear message', vim.inspect(notes))
  notes = {}
  vim.notify = function(m) table.insert(notes, m) end
  vim.cmd('CodeRagAsk where is it?')
  vim.notify = orig_notify
  check(#notes == 1 and notes[1]:find('not running', 1, true) and notes[1]:find('/nonexistent/coderag', 1, true)
    and not notes[1]:find('Python', 1, true), ':CodeRagAsk then says the server is not running, not "open a Python file"', vim.inspect(notes))
end, debug.traceback)

if not ok then check(false, 'test script error', err) end
finish()
