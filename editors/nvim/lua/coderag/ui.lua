-- The chat panel: one split buffer holding the conversation (each question, streamed then
-- verified, appended under the earlier ones), its keys, and the history picker.
local render = require('coderag.render')

local U = {}

local ns = vim.api.nvim_create_namespace('coderag')
-- entries: the views shown, oldest first ({ question, result?, pending?, show_context?, key?, root? });
-- rows: buffer row (1-based) -> { entry = i, cite = j } for the rows a citation sits on.
local state = { win = nil, buf = nil, entries = {}, rows = {}, starts = {} }
U.state = state

function U.define_highlights()
  local set = vim.api.nvim_set_hl
  set(0, 'CodeRagRejected', { default = true, strikethrough = true, fg = '#d75f5f', ctermfg = 167 })
  set(0, 'CodeRagProvisional', { default = true, link = 'Comment' })
  set(0, 'CodeRagProgress', { default = true, link = 'MoreMsg' })
  set(0, 'CodeRagQuestion', { default = true, link = 'Title' })
end

-- Neovim's markdown syntax before 0.10 (0.7.2's, Debian 12's) conceals bold and italics
-- only: a code span's backticks, a heading's '#' and a link's target stay on screen even with
-- 'conceallevel' 2. These rules, defined after it (so they win where both match), conceal
-- them too; with `contained` for a hover float, where the markdown rules are an included
-- cluster (the new items join it by their group names).
local CONCEAL = {
  [[syntax region markdownCode matchgroup=markdownCodeDelimiter start="`" end="`" keepend contains=markdownLineStart concealends]],
  [[syntax region markdownCode matchgroup=markdownCodeDelimiter start="`` \=" end=" \=``" keepend contains=markdownLineStart concealends]],
  -- a link: text and target with nothing between ("[i] (see x)" is no link)
  [[syntax region markdownLinkText matchgroup=markdownLinkTextDelimiter start="!\=\[\%(\%(\_[^][]\|\[\_[^][]*\]\)*](\)\@=" end="\](\@=" nextgroup=coderagLinkTarget contains=@markdownInline,markdownLineStart concealends]],
  [[syntax region coderagLinkTarget matchgroup=markdownLinkDelimiter start="(" end=")" keepend contained conceal concealends contains=NONE]],
}
for i = 1, 6 do
  table.insert(CONCEAL, string.format([[syntax region markdownH%d matchgroup=markdownH%dDelimiter start="%s#\@!\s*" end="#*\s*$" keepend oneline contains=@markdownInline,markdownAutomaticLink contained concealends]],
    i, i, string.rep('#', i)))
end

--- Conceals the markdown syntax's code-span backticks, heading marks and link targets in
--- `buf` (which shows markdown through the syntax, as 0.7-0.9 do); `contained`: buf is a
--- hover float of vim.lsp.util.stylize_markdown.
function U.conceal_markdown(buf, contained)
  vim.api.nvim_buf_call(buf, function()
    for _, c in ipairs(CONCEAL) do
      if contained and not c:find(' contained', 1, true) then c = c .. ' contained' end
      pcall(vim.cmd, c)
    end
  end)
end

--- Closes the panel's window (the conversation stays in its buffer).
local function close()
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    if #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(state.win, true)
    else
      vim.cmd('enew')
    end
  end
  state.win = nil
end
U.close = close

--- The panel's window, when it is shown.
function U.panel_win()
  if state.win and vim.api.nvim_win_is_valid(state.win) and state.buf
      and vim.api.nvim_win_get_buf(state.win) == state.buf then
    return state.win
  end
end

-- A window to open files in: the previous one, else any other normal window, else a new split.
local function target_win()
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  if prev ~= 0 and prev ~= state.win and vim.api.nvim_win_get_config(prev).relative == '' then return prev end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if w ~= state.win and vim.api.nvim_win_get_config(w).relative == '' then return w end
  end
  vim.cmd('aboveleft vsplit')
  return vim.api.nvim_get_current_win()
end

--- Opens `file` at lines a..b in the window beside the panel; the panel stays.
function U.open_location(file, a)
  local w = target_win()
  vim.api.nvim_set_current_win(w)
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.max(1, math.min(a, last)), 0 })
  vim.cmd('normal! zv')
end

local function cite_file(c, root)
  if c.uri then return vim.uri_to_fname(c.uri) end
  if root and c.path:sub(1, 1) ~= '/' then return root .. '/' .. c.path end
  return c.path
end

--- Opens citation j of entry i (default: the last answer shown).
function U.open_citation(M, j, i)
  i = i or #state.entries
  local e = state.entries[i]
  local result = e and e.result or (M.last and M.last.result)
  local c = result and result.citations and result.citations[j]
  if not c then return end
  U.open_location(cite_file(c, e and e.root), c.startLine)
end

-- Every "path:a-b" (or "path:a") on a line, in any form the panel shows it: [path:a-b],
-- [`path:a-b`], `path:a-b`, (path:12), a list row, a context row. { s, e, path, a, b }.
function U.locations_in(line)
  local out = {}
  for s, path, a, b, e in line:gmatch('()([%w_%.%-/]*[%w_%-]%.[%w_]+)`?:(%d+)[%-–]?(%d*)()') do
    table.insert(out, { s = s, e = e, path = path, a = tonumber(a), b = tonumber(b) or tonumber(a) })
  end
  return out
end

-- The location under the cursor in the panel: the one the cursor is on, else the line's first.
local function location_at_cursor()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local hit = state.rows[row]
  local i = hit and hit.entry or U.entry_at(row)
  local e = state.entries[i]
  if hit and hit.cite then return e, hit.cite end
  local locs = U.locations_in(vim.api.nvim_get_current_line())
  local pick = locs[1]
  for _, l in ipairs(locs) do
    if col + 1 >= l.s - 2 and col + 1 <= l.e + 1 then pick = l end
  end
  if not pick or not e then return e, nil, pick end
  local result = e.result
  for j, c in ipairs(result and result.citations or {}) do
    if c.path == pick.path and c.startLine <= pick.b and pick.a <= c.endLine then return e, j end
  end
  return e, nil, pick
end

--- The entry (index) that buffer row `row` belongs to.
function U.entry_at(row)
  local at = nil
  for i, s in ipairs(state.starts) do
    if s <= row then at = i end
  end
  return at
end

local function jump(M)
  local e, j, loc = location_at_cursor()
  if j then
    local c = e.result.citations[j]
    return U.open_location(cite_file(c, e.root), c.startLine)
  end
  if loc then
    local root = e and e.root or (M.client() and M.client().config.root_dir)
    local file = loc.path:sub(1, 1) == '/' and loc.path or ((root or vim.fn.getcwd()) .. '/' .. loc.path)
    if vim.fn.filereadable(file) == 1 then return U.open_location(file, loc.a) end
    vim.notify('coderag: ' .. loc.path .. ' is not a file of ' .. (root or 'this workspace'), vim.log.levels.WARN)
  end
end

local function set_keys(M, buf)
  local opts = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set('n', 'q', close, opts)
  vim.keymap.set('n', '<CR>', function() jump(M) end, opts)
  vim.keymap.set('n', 'c', function() U.toggle_context(M, U.entry_at(vim.api.nvim_win_get_cursor(0)[1])) end, opts)
  vim.keymap.set('n', 'a', function() M.prompt_ask({ followup = true }) end, opts)
  vim.keymap.set('n', 'A', function() M.prompt_ask({}) end, opts)
  if M.config.cancel_key then
    vim.keymap.set('n', M.config.cancel_key, function() M.cancel() end, opts)
  end
end

local function ensure_buf(M)
  if state.buf and vim.api.nvim_buf_is_valid(state.buf) then return state.buf end
  state.buf = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, state.buf, 'coderag://chat')
  vim.bo[state.buf].bufhidden = 'hide'
  vim.bo[state.buf].swapfile = false
  vim.bo[state.buf].filetype = 'markdown'
  U.conceal_markdown(state.buf)
  -- and again whenever the syntax is loaded anew (`:syntax on`, a colorscheme's reload)
  vim.api.nvim_create_autocmd('Syntax', { buffer = state.buf, callback = function(a) U.conceal_markdown(a.buf) end })
  set_keys(M, state.buf)
  return state.buf
end

local function ensure_win(M, focus)
  local w = U.panel_win()
  if not w then
    local pc = M.config.panel or {}
    local from = vim.api.nvim_get_current_win()
    if pc.position == 'bottom' then
      vim.cmd('botright ' .. (pc.height or 15) .. 'split')
    else
      vim.cmd('botright ' .. (pc.width or math.max(60, math.floor(vim.o.columns * 0.4))) .. 'vsplit')
    end
    w = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(w, state.buf)
    state.win = w
    if not focus then vim.api.nvim_set_current_win(from) end
  elseif focus then
    vim.api.nvim_set_current_win(w)
  end
  local wo = vim.wo[w]
  wo.wrap = true
  wo.linebreak = true -- rows break between words
  wo.breakindent = true
  wo.showbreak = ''
  wo.conceallevel = 2
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.foldenable = false
  wo.winfixwidth = true
  return w
end

-- Redraws the whole conversation; returns the first row of each entry.
local function redraw(M)
  local buf = ensure_buf(M)
  local lines, hls = {}, {}
  state.rows, state.starts = {}, {}
  for i, view in ipairs(state.entries) do
    if i > 1 then
      table.insert(lines, '')
      table.insert(lines, '---')
      table.insert(lines, '')
    end
    local off = #lines
    state.starts[i] = off + 1
    local l, cite_rows, h = render.answer_view(view)
    for _, x in ipairs(l) do table.insert(lines, x) end
    for row, j in pairs(cite_rows) do state.rows[off + row] = { entry = i, cite = j } end
    for _, x in ipairs(h) do table.insert(hls, { x[1] + off, x[2], x[3], x[4] }) end
    table.insert(hls, { off, 0, -1, 'CodeRagQuestion' })
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(hls) do vim.api.nvim_buf_add_highlight(buf, ns, h[4], h[1], h[2], h[3]) end
end

-- Puts entry i's row `row` (1-based, within the entry) at the top of the panel.
local function show_row(i, row)
  local w = U.panel_win()
  if not w or not state.starts[i] then return end
  local r = math.min(state.starts[i] + (row or 1) - 1, vim.api.nvim_buf_line_count(state.buf))
  vim.api.nvim_win_set_cursor(w, { r, 0 })
  vim.api.nvim_win_call(w, function() vim.cmd('normal! zt') end)
end

--- Shows `view` in the panel: the entry with the same `key` (a running question's) is
--- replaced, any other view is appended under the conversation. Returns the panel's window.
function U.show(M, view)
  local at
  if view.key ~= nil then
    for i, e in ipairs(state.entries) do
      if e.key == view.key then at = i end
    end
  end
  local fresh = at == nil
  if fresh then
    table.insert(state.entries, view)
    at = #state.entries
    local keep = M.config.panel and M.config.panel.max_entries or 50
    while #state.entries > keep do
      table.remove(state.entries, 1)
      at = at - 1
    end
  else
    state.entries[at] = view
  end
  ensure_buf(M)
  redraw(M)
  -- focus moves to the panel for a new question only, not while its answer streams in
  local w = ensure_win(M, fresh and (M.config.panel == nil or M.config.panel.focus ~= false))
  if fresh then show_row(at, 1) end
  return w
end

--- Opens the panel on the conversation as it is.
function U.show_panel(M)
  ensure_buf(M)
  redraw(M)
  return ensure_win(M, true)
end

--- Redraws the panel while the question runs (its entry's progress and streamed text).
function U.refresh(M)
  local p = M.pending
  if not p then return end
  for _, e in ipairs(state.entries) do
    if e.key == p and e.pending == p then
      redraw(M)
      return
    end
  end
end

--- Shows or hides the context of entry i (default: the last answer), and puts it in view.
function U.toggle_context(M, i)
  i = i or #state.entries
  local e = state.entries[i]
  if not e or not e.result then return end
  e.show_context = not e.show_context
  redraw(M)
  ensure_win(M, true)
  if e.show_context then
    local l = render.answer_view(e)
    for row, text in ipairs(l) do
      if text:find('^## Context') then return show_row(i, row) end
    end
  end
end

--- The conversation is empty again (the history stays).
function U.clear(M)
  state.entries = {}
  redraw(M)
end

--- vim.ui.select over this workspace's kept answers, newest first; shows the one picked.
function U.pick_history(M)
  local hist = M.workspace_history()
  if #hist == 0 then return vim.notify('coderag: no answers yet') end
  local items = {}
  for i = #hist, 1, -1 do table.insert(items, hist[i]) end
  vim.ui.select(items, {
    prompt = 'CodeRAG answers',
    format_item = function(h) return os.date('%Y-%m-%d %H:%M ', h.time) .. h.question end,
  }, function(h)
    if h then U.show(M, { question = h.question, result = h.result, root = h.root }) end
  end)
end

return U
