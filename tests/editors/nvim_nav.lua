-- nvim_test.lua part: explain, code actions, the callers lens, the prompt, K with two hover
-- servers.
local T = ...
local check, LIMIT = T.check, T.LIMIT
local coderag, client, ws, bin, index_dir = T.coderag, T.client, T.ws, T.bin, T.index_dir
local src_win, progress, render = T.src_win, T.progress, T.render
local panel, last_entry, close_panel = T.panel, T.last_entry, T.close_panel
local float_wins, close_floats, buf_text, visible_line = T.float_wins, T.close_floats, T.buf_text, T.visible_line
local llm_control = T.llm_control

-- Explain with the LLM (coderag.explain), streamed like a question.
vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
vim.api.nvim_win_set_cursor(0, { 39, 5 })
local n_hist = #coderag.history
coderag.explain()
vim.wait(LIMIT, function() return #coderag.history == n_hist + 1 and coderag.pending == nil end, 20)
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

-- Without an LLM the server offers "Show `NAME` and its callers (CodeRAG)" (coderag.explain,
-- mode extractive): chosen from vim.lsp.buf.code_action(), it is run and its answer shown in
-- the panel; :CodeRagExplain runs it too. A second server without an LLM (its own client,
-- the same index) offers it here.
do
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/shop/models.py'))
  local bufnr = vim.api.nvim_get_current_buf()
  local nollm = vim.lsp.start_client({ name = 'coderag-nollm', cmd = { bin, 'lsp' }, root_dir = ws,
    init_options = { indexDir = index_dir, llm = { url = '' } } })
  vim.lsp.buf_attach_client(bufnr, nollm)
  vim.wait(LIMIT, function() local c = vim.lsp.get_client_by_id(nollm); return c and c.initialized end, 50)
  local function shown_ok(what, detail)
    local r = coderag.last and coderag.last.result or {}
    local cites = {}
    for _, c in ipairs(r.citations or {}) do cites[tostring(c.symbol)] = true end
    local entry = last_entry()
    check(r.mode == 'extractive' and coderag.last.question == '`apply_tax` and its callers' and cites.apply_tax
      and cites['Order.total'] and entry:find('^# `apply_tax` and its callers') ~= nil, what,
      detail or vim.inspect({ q = coderag.last and coderag.last.question, mode = r.mode, cites = cites }))
    -- Issue 36: the caller marked as a caller, its call line quoted as a numbered line.
    check(entry:find('It is called by `Order.total`', 1, true) ~= nil
      and entry:find('Order%.total`%*%*[^\n]* calls `apply_tax`') ~= nil
      and entry:find('\n%s*36 │ [^\n]*apply_tax%(') ~= nil,
      what .. ': Order.total shown as a caller, its call line quoted', entry:sub(1, 1200))
  end
  local offered
  local orig_select = vim.ui.select
  vim.ui.select = function(items, o, on_choice)
    offered = {}
    for _, it in ipairs(items) do
      local title = o.format_item and o.format_item(it) or ''
      table.insert(offered, title)
      if title:find('Show `apply_tax` and its callers', 1, true) then return on_choice(it) end
    end
    on_choice(nil)
  end
  vim.api.nvim_win_set_cursor(0, { 39, 5 })
  local n = #coderag.history
  vim.lsp.buf.code_action()
  vim.wait(LIMIT, function() return offered ~= nil and (#coderag.history > n or not table.concat(offered, '|'):find('Show', 1, true)) end, 20)
  vim.wait(LIMIT, function() return coderag.pending == nil end, 20)
  vim.ui.select = orig_select
  check(offered and table.concat(offered, '|'):find('Show `apply_tax` and its callers (CodeRAG)', 1, true) ~= nil,
    'without an LLM, code actions offer "Show `apply_tax` and its callers"', vim.inspect(offered))
  shown_ok('the Show action runs coderag.explain (extractive): apply_tax and its caller Order.total in the panel')
  close_panel()
  -- :CodeRagExplain runs the action its server offers: here the extractive one.
  local orig_client = coderag.client
  coderag.client = function() return vim.lsp.get_client_by_id(nollm) end
  coderag.last = nil
  n = #coderag.history
  vim.cmd('CodeRagExplain')
  vim.wait(LIMIT, function() return #coderag.history > n and coderag.pending == nil end, 20)
  coderag.client = orig_client
  shown_ok(':CodeRagExplain without an LLM shows the definition and its callers (no error)')
  close_panel()
  vim.lsp.stop_client(nollm)
  vim.wait(LIMIT, function() return vim.lsp.get_client_by_id(nollm) == nil end, 50)
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
  -- Issue 38: coderag's hover rendered on every Neovim (0.7.2's markdown syntax conceals no
  -- code span or link by itself): no backticks, no link target on screen.
  vim.api.nvim_win_set_cursor(src, { 36, 16 })
  coderag.hover(bufnr)
  vim.wait(LIMIT, function() return #float_wins() == 1 end, 20)
  local fw = float_wins()[1]
  local raw, seen = fw and buf_text(fw) or '', {}
  if fw then
    vim.api.nvim_win_call(fw, function() vim.cmd('redraw') end)
    for l = 1, vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(fw)) do table.insert(seen, visible_line(fw, l)) end
  end
  seen = table.concat(seen, '\n')
  check(raw:find('](file://', 1, true) ~= nil and seen:find('apply_tax', 1, true) ~= nil and
    seen:find('](', 1, true) == nil and seen:find('file://', 1, true) == nil and seen:find('`', 1, true) == nil,
    "the hover float shows its links' text and code without markdown syntax", seen)
  vim.api.nvim_set_current_win(src)
  close_floats()
end
