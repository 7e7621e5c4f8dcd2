-- Progress of indexing and of questions: a statusline component, and a handler that shows it
-- through vim.notify (replacing its previous message with nvim-notify, on one echo line with the
-- built-in notify). $/progress is also passed on to vim.lsp.handlers['$/progress'], which is
-- what fidget.nvim and similar plugins listen to.
local render = require('coderag.render')

local P = {}

P.index = nil -- { title, message, percentage, done } of the indexing progress
P.ask = nil -- { title, message, percentage, done } of the running question
P.builtin_notify = vim.notify -- to tell nvim-notify & co from the built-in one
P.notify_enabled = true

local last_notified = {}
local records = {}

local function fire()
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'CodeRagProgress', modeline = false })
  pcall(vim.cmd, 'redrawstatus!')
end

local function show(kind, p)
  if not P.notify_enabled then return end
  -- The server titles a first index "Indexing NAME" and the check of an index built before
  -- "Checking the index of NAME"; the end names the workspace ("CodeRAG c-lua: up to date: 61
  -- files, 2175 chunks, ..."), the pass being over.
  local text = render.progress_text(p)
  if p.done then
    local title = (p.title and p.title ~= 'CodeRAG') and (' ' .. p.title) or ''
    if kind == 'index' then
      title = title:gsub('^ Indexing ?', ' '):gsub('^ Checking the index of ', ' '):gsub('^%s+$', '')
    end
    text = 'CodeRAG' .. title .. ': ' .. (p.message or 'done')
  end
  if last_notified[kind] == text then return end
  -- Reports are throttled to whole tens of percent (indexing) or message changes (questions).
  if kind == 'index' and not p.done and p.kind == 'report' and p.percentage and last_notified.index_pct
      and math.floor(p.percentage / 10) == math.floor(last_notified.index_pct / 10) then
    return
  end
  last_notified[kind] = text
  if kind == 'index' then last_notified.index_pct = p.percentage end
  if vim.notify == P.builtin_notify then
    -- One line, not kept in :messages.
    vim.api.nvim_echo({ { text, p.done and 'None' or 'MoreMsg' } }, false, {})
  else
    local ok, rec = pcall(vim.notify, text, vim.log.levels.INFO,
      { title = 'CodeRAG', replace = records[kind], hide_from_history = not p.done })
    records[kind] = ok and type(rec) == 'table' and not p.done and rec or nil
  end
end

--- Applies one work-done progress value to the state `kind` ('index' or 'ask').
function P.update(kind, v)
  if type(v) ~= 'table' or not v.kind then return end
  local p = P[kind] or {}
  if v.kind == 'begin' then p = { title = v.title } end
  p.kind = v.kind
  if v.message ~= nil and v.message ~= vim.NIL then
    p.message = v.message
  elseif v.kind == 'end' then
    p.message = 'done'
  end
  -- A question's percentage says nothing (0 until the end): only indexing shows one.
  if type(v.percentage) == 'number' and kind == 'index' then p.percentage = v.percentage end
  p.done = v.kind == 'end'
  P[kind] = p
  show(kind, p)
  fire()
end

--- Marks a question's progress as finished (also when the server sent no end).
function P.finish_ask(message)
  if P.ask and not P.ask.done then P.update('ask', { kind = 'end', message = message }) end
end

--- The statusline component: the running question, else indexing, else ''.
--- Plain text (a single `%`): use it in %{} or a statusline plugin, not in a %! expression.
function P.statusline()
  if P.ask and not P.ask.done then return render.progress_text(P.ask) end
  if P.index and not P.index.done then return render.progress_text(P.index) end
  return ''
end

--- The same, escaped for a statusline expression (%!) or a format string.
function P.statusline_escaped()
  return (P.statusline():gsub('%%', '%%%%'))
end

--- Neovim's default statusline with the component before the ruler, for users without one.
P.default_statusline =
  "%<%f %h%m%r%=%{luaeval(\"require'coderag'.statusline()\")}  %-14.(%l,%c%V%) %P"

return P
