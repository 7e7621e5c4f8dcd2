-- Hover and the counting lenses: K with several servers (one float), :CodeRagHover, and what
-- running "3 callers, 1 reference" does. `require('coderag.nav')(M)` adds M.hover_all,
-- M.hover and M.show_callers to the plugin and returns the client's handlers.
local ui = require('coderag.ui')

return function(M)
local N = {}
local request, notify = M.request, M.notify

-- The lines without their leading and trailing empty ones (vim.lsp.util.trim_empty_lines went
-- away in Neovim 0.10).
local function trim(lines)
  local a, b = 1, #lines
  while a <= b and lines[a]:match('^%s*$') do a = a + 1 end
  while b >= a and lines[b]:match('^%s*$') do b = b - 1 end
  return vim.list_slice(lines, a, b)
end

local function get_clients_all(bufnr)
  if vim.lsp.get_clients then return vim.lsp.get_clients({ bufnr = bufnr }) end
  return vim.lsp.buf_get_clients(bufnr)
end

-- Whether a client other than coderag that answers hovers is attached to `bufnr`.
function N.other_hover(bufnr, client_id)
  local clients = get_clients_all(bufnr)
  for _, c in pairs(clients) do
    local caps = c.server_capabilities or {}
    local old = c.resolved_capabilities or {}
    if c.id ~= client_id and c.name ~= 'coderag' and (caps.hoverProvider or old.hover) then return true end
  end
  return false
end

-- coderag's hover reply to vim.lsp.buf.hover (a K of your own). With another hover server
-- attached (pylsp, clangd...), it shows that one alone: two replies would open a float each, the
-- second focusing the first, and a second K then runs 'keywordprg'. coderag's is kept for
-- :CodeRagHover; the plugin's own K (M.hover_all) shows both in one float.
function N.on_hover(err, result, ctx, config)
  if N.other_hover(ctx.bufnr, ctx.client_id) then
    M.last_hover = { result = result, bufnr = ctx.bufnr }
    return
  end
  local buf, win = vim.lsp.handlers['textDocument/hover'](err, result, ctx, config)
  if buf then ui.conceal_markdown(buf, true) end
  return buf, win
end

--- Hover from every server attached to the buffer in one float, coderag's last (what K runs
--- when you have no K of your own). A second call focuses the float, as Neovim's hover does.
function M.hover_all(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local params = vim.lsp.util.make_position_params()
  vim.lsp.buf_request_all(bufnr, 'textDocument/hover', params, function(results)
    local parts = {}
    local function add(id, r)
      if not r or r.error or not r.result or not r.result.contents then return end
      local lines = trim(vim.lsp.util.convert_input_to_markdown_lines(r.result.contents))
      if #lines == 0 then return end
      if #parts > 0 then table.insert(parts, '---') end
      for _, l in ipairs(lines) do table.insert(parts, l) end
    end
    local mine = {}
    for id, r in pairs(results) do
      local c = vim.lsp.get_client_by_id(id)
      if c and c.name == 'coderag' then table.insert(mine, r) else add(id, r) end
    end
    for _, r in ipairs(mine) do add(nil, r) end
    if #parts == 0 then return end
    local buf = vim.lsp.util.open_floating_preview(parts, 'markdown', { border = M.config.float.border, focus_id = 'textDocument/hover',
      max_width = M.config.float.max_width, max_height = M.config.float.max_height })
    if buf then ui.conceal_markdown(buf, true) end
  end)
end

--- Shows coderag's hover for the cursor's name in a float (a second call focuses it).
function M.hover(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then return notify(M.why_no_client(bufnr), vim.log.levels.WARN) end
  local cur = vim.api.nvim_win_get_cursor(0)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = cur[1] - 1, character = cur[2] } }
  request(client, 'textDocument/hover', params, function(err, result)
    if err or not result or not result.contents then return notify('no hover here') end
    local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
    lines = trim(lines)
    local buf = vim.lsp.util.open_floating_preview(lines, 'markdown', { border = M.config.float.border, focus_id = 'coderag_hover',
      max_width = M.config.float.max_width, max_height = M.config.float.max_height })
    if buf then ui.conceal_markdown(buf, true) end
  end, bufnr)
end

-- The counting lenses ("3 callers, 1 reference", "cited for: ...") carry the command "":
-- run (vim.lsp.codelens.run()), a count lists the callers of the definition on the cursor's
-- line (call hierarchy) in the quickfix list; "cited for" shows the answer in the panel.
function N.count_lens(command, ctx)
  local title = command.title or ''
  if title:find('^cited for: ') then
    if M.last then return ui.show(M, { question = M.last.question, result = M.last.result, root = M.last.root }) end
    return notify('no answer yet')
  end
  if not title:find('^%d+ caller') then return notify(title) end
  local client = vim.lsp.get_client_by_id(ctx.client_id) or M.client(ctx.bufnr)
  local win = vim.fn.bufwinid(ctx.bufnr)
  local row = (win ~= -1 and vim.api.nvim_win_get_cursor(win) or { 1, 0 })[1]
  local text = vim.api.nvim_buf_get_lines(ctx.bufnr, row - 1, row, false)[1] or ''
  local uri = vim.uri_from_bufnr(ctx.bufnr)
  -- The lens names no definition: ask for each word of its line in turn ("def", "static",
  -- a return type...) until one names the definition that starts on it.
  local cols = {}
  for s in text:gmatch('()[%a_][%w_]*') do table.insert(cols, s - 1) end
  local function try(k)
    if not cols[k] then return notify('no definition on this line') end
    request(client, 'textDocument/prepareCallHierarchy', { textDocument = { uri = uri }, position = { line = row - 1, character = cols[k] } },
      function(err, items)
        local item = not err and type(items) == 'table' and items[1]
        if not item or item.range.start.line > row - 1 or item.range['end'].line < row - 1 then return try(k + 1) end
        M.show_callers(client, item, ctx.bufnr)
      end, ctx.bufnr)
  end
  try(1)
end

--- Lists the callers of call-hierarchy `item` in the quickfix list.
function M.show_callers(client, item, bufnr)
  request(client, 'callHierarchy/incomingCalls', { item = item }, function(err2, calls)
    if err2 then return notify('callers: ' .. tostring(err2.message or err2), vim.log.levels.WARN) end
    local qf = {}
    for _, call in ipairs(calls or {}) do
      local fname = vim.uri_to_fname(call.from.uri)
      for _, r in ipairs(call.fromRanges or {}) do
        table.insert(qf, { filename = fname, lnum = r.start.line + 1, col = r.start.character + 1, text = call.from.name })
      end
      if not call.fromRanges or #call.fromRanges == 0 then
        table.insert(qf, { filename = fname, lnum = call.from.range.start.line + 1, col = 1, text = call.from.name })
      end
    end
    vim.fn.setqflist({}, ' ', { title = 'CodeRAG: callers of ' .. item.name, items = qf })
    M.last_callers = { name = item.name, items = qf }
    vim.cmd('copen')
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'CodeRagCallers', modeline = false })
  end, bufnr)
end

M.other_hover = N.other_hover
return N
end
