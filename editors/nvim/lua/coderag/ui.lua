-- The answer float (streamed while the question runs, then the verified answer), its keys,
-- and the history picker.
local render = require('coderag.render')

local U = {}

local ns = vim.api.nvim_create_namespace('coderag')
local state = { win = nil, buf = nil, view = nil, cite_rows = {} }
U.state = state

function U.define_highlights()
  local set = vim.api.nvim_set_hl
  set(0, 'CodeRagRejected', { default = true, strikethrough = true, fg = '#d75f5f', ctermfg = 167 })
  set(0, 'CodeRagProvisional', { default = true, link = 'Comment' })
  set(0, 'CodeRagProgress', { default = true, link = 'MoreMsg' })
end

local function close()
  if state.win and vim.api.nvim_win_is_valid(state.win) then vim.api.nvim_win_close(state.win, true) end
  state.win, state.buf = nil, nil
end
U.close = close

--- Opens citation i of the shown answer (1-based) in the previous window.
function U.open_citation(M, i)
  local result = state.view and state.view.result or (M.last and M.last.result)
  local c = result and result.citations and result.citations[i]
  if not c then return end
  close()
  vim.cmd('edit ' .. vim.fn.fnameescape(c.uri and vim.uri_to_fname(c.uri) or c.path))
  vim.api.nvim_win_set_cursor(0, { c.startLine, 0 })
  vim.cmd('normal! zv')
end

-- The citation under the cursor: its list row, or a [path:a-b] marker in the text.
local function citation_at_cursor()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  if state.cite_rows[row] then return state.cite_rows[row] end
  local result = state.view and state.view.result
  if not result then return end
  local line = vim.api.nvim_get_current_line()
  for s, path, a, b, e in line:gmatch('()%[`?([^%[%]:%s`]+):(%d+)%-?(%d*)`?%]()') do
    if col + 1 >= s and col + 1 < e then
      local a1 = tonumber(a)
      local b1 = tonumber(b) or a1
      for j, c in ipairs(result.citations or {}) do
        if c.path == path and c.startLine <= b1 and a1 <= c.endLine then return j end
      end
    end
  end
end

local function set_keys(M, buf)
  local opts = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set('n', 'q', close, opts)
  vim.keymap.set('n', '<Esc>', close, opts)
  vim.keymap.set('n', '<CR>', function()
    local i = citation_at_cursor()
    if i then U.open_citation(M, i) end
  end, opts)
  vim.keymap.set('n', 'c', function()
    if state.view and state.view.result then
      state.view.show_context = not state.view.show_context
      U.show(M, state.view)
    end
  end, opts)
  if M.config.cancel_key then
    vim.keymap.set('n', M.config.cancel_key, function() M.cancel() end, opts)
  end
end

--- Shows `view` ({ question, result? , pending?, show_context? }) in the float, reusing it.
function U.show(M, view)
  state.view = view
  local lines, cite_rows, hls = render.answer_view(view)
  state.cite_rows = cite_rows
  local fresh = not (state.buf and vim.api.nvim_buf_is_valid(state.buf))
  if fresh then
    state.buf = vim.api.nvim_create_buf(false, true)
    vim.bo[state.buf].bufhidden = 'wipe'
    set_keys(M, state.buf)
  end
  local buf = state.buf
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  if vim.bo[buf].filetype ~= 'markdown' then vim.bo[buf].filetype = 'markdown' end
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(hls) do vim.api.nvim_buf_add_highlight(buf, ns, h[4], h[1], h[2], h[3]) end
  local size = render.float_size(lines, M.config.float, vim.o.columns, vim.o.lines, vim.bo[buf].tabstop)
  local cfg = {
    relative = 'editor',
    width = size.width,
    height = size.height,
    row = math.max(math.floor((vim.o.lines - size.height) / 2) - 1, 0),
    col = math.max(math.floor((vim.o.columns - size.width) / 2), 0),
  }
  if state.win and vim.api.nvim_win_is_valid(state.win) then
    vim.api.nvim_win_set_config(state.win, cfg)
  else
    cfg.style = 'minimal'
    cfg.border = M.config.float.border
    state.win = vim.api.nvim_open_win(buf, true, cfg)
  end
  local wo = vim.wo[state.win]
  wo.wrap = true
  wo.linebreak = true -- words whole at the edge; wrapped_height counts rows so
  wo.breakindent = false
  wo.showbreak = ''
  wo.conceallevel = 2
  return state.win
end

--- Redraws the float of the running question, if it is shown.
function U.refresh(M)
  local v = state.view
  if v and v.pending and v.pending == M.pending and state.win and vim.api.nvim_win_is_valid(state.win) then
    U.show(M, v)
  end
end

--- vim.ui.select over the kept answers, newest first; reopens the one picked.
function U.pick_history(M)
  if #M.history == 0 then return vim.notify('coderag: no answers yet') end
  local items = {}
  for i = #M.history, 1, -1 do table.insert(items, M.history[i]) end
  vim.ui.select(items, {
    prompt = 'CodeRAG answers',
    format_item = function(h) return os.date('%H:%M ', h.time) .. h.question end,
  }, function(h)
    if h then U.show(M, { question = h.question, result = h.result }) end
  end)
end

return U
