-- nvim_test.lua part: :CodeRagAsk, the panel with a real answer, quickfix, code lenses, hover,
-- the root rule, the statusline and :CodeRagStatus.
local T = ...
local check, LIMIT = T.check, T.LIMIT
local coderag, client, ws, bin, index_dir = T.coderag, T.client, T.ws, T.bin, T.index_dir
local src_win, progress, render = T.src_win, T.progress, T.render
local panel, last_entry, close_panel = T.panel, T.last_entry, T.close_panel
local float_wins, close_floats, buf_text, visible_line = T.float_wins, T.close_floats, T.buf_text, T.visible_line
local llm_control = T.llm_control

-- :CodeRagAsk
vim.api.nvim_win_set_cursor(0, { 36, 15 })
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
  -- Issue 36: a lead, the definitions quoted as fenced code of numbered lines, the rest folded.
  check(text:find('The best match is', 1, true) ~= nil and text:find('\n```\n   39 │ def apply_tax(amount):', 1, true) ~= nil,
    'the answer quotes apply_tax from its first line in a code block (numbered lines)', text:sub(1, 600))
  check(text:find('\nAlso relevant:\n%- ') ~= nil, 'the rest is folded under "Also relevant:"', text:sub(1, 1200))
  -- The extractive answer cites these in its own text (origin "extractive", source "auto"):
  -- they are not the server's pick (only origin "fallback" is).
  local origins = {}
  for _, c in ipairs(result.citations or {}) do origins[tostring(c.origin)] = true end
  check(origins.extractive and not origins.fallback and text:find("server's pick", 1, true) == nil
    and text:find('## Citations (verified)', 1, true) ~= nil,
    "an extractive answer's citations are not labelled the server's pick", vim.inspect(origins) .. ' ' .. (text:match('## Citations[^\n]*') or ''))
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
local t = T.tmp
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
local st = render.status_text({ state = 'indexing', files = 0, chunks = 0, indexed = 812, total = 1984,
  message = 'ws: indexing, 812/1984 files', roots = { { root = '/w', state = 'indexing', indexed = 812, total = 1984, files = 0 } } })
check(st == 'indexing 812/1984 files (40%) — /w', ':CodeRagStatus while indexing', st)
local real
coderag.status(function(_, s) real = s end)
vim.wait(LIMIT, function() return real ~= nil end, 20)
check(real and render.status_text(real):find('^ready: %d+ files, %d+ chunks') ~= nil, ':CodeRagStatus when ready',
  real and render.status_text(real))
