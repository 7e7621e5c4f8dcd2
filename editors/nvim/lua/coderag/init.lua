-- coderag.nvim: ask questions about a Python codebase through the coderag
-- language server and walk the verified citations.
--
--   require('coderag').setup({ cmd = { 'coderag', 'lsp' } })
--
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and on
-- 0.8+ (vim.lsp.start); newer APIs are feature-detected.
local M = {}

local uv = vim.uv or vim.loop

M.config = {
  cmd = { 'coderag', 'lsp' },
  filetypes = { 'python', 'c', 'cpp', 'go', 'rust', 'java', 'javascript', 'javascriptreact',
                'typescript', 'typescriptreact' },
  -- Markers that find the workspace root upwards from the buffer's file;
  -- a function(fname) -> dir, or a string, overrides. Falls back to the cwd.
  root_markers = { '.git', 'pyproject.toml', 'setup.py', 'setup.cfg', 'go.mod', 'Cargo.toml',
                   'package.json', '.coderag' },
  root_dir = nil,
  -- initializationOptions, flat ({ ['llm.url'] = ... }) or nested ({ llm = { url = ... } }).
  init_options = {},
  -- Sent with every question: 'auto', 'extractive' or 'llm'.
  mode = nil,
  budget = nil,
  codelens = true, -- refresh code lenses on BufEnter, CursorHold and InsertLeave
  float = { border = 'rounded', max_width = 100, max_height = 30 },
  open_quickfix = false, -- :copen after each answer
  on_attach = nil,
  capabilities = nil,
}

M.last = nil -- { question = ..., result = ... } of the last answer
M.client_ids = {} -- root -> client id

local has = function(f) return vim.fn.has(f) == 1 end

local function notify(msg, level)
  vim.notify('coderag: ' .. msg, level or vim.log.levels.INFO)
end

-- client:request(...) on 0.11+, client.request(...) before.
local function request(client, method, params, handler, bufnr)
  if has('nvim-0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function get_clients()
  if vim.lsp.get_clients then return vim.lsp.get_clients({ name = 'coderag' }) end
  local out = {}
  for _, c in pairs(vim.lsp.get_active_clients()) do
    if c.name == 'coderag' then table.insert(out, c) end
  end
  return out
end

local function dirname(p) return vim.fn.fnamemodify(p, ':h') end

local function find_root(fname)
  local cfg = M.config
  if type(cfg.root_dir) == 'function' then
    local r = cfg.root_dir(fname)
    if r then return r end
  elseif type(cfg.root_dir) == 'string' then
    return vim.fn.fnamemodify(cfg.root_dir, ':p'):gsub('/$', '')
  end
  local dir = fname ~= '' and dirname(fname) or vim.fn.getcwd()
  while dir and dir ~= '' do
    for _, m in ipairs(cfg.root_markers) do
      if uv.fs_stat(dir .. '/' .. m) then return dir end
    end
    local parent = dirname(dir)
    if parent == dir then break end
    dir = parent
  end
  return vim.fn.getcwd()
end

--- The coderag client for a buffer (attached to it), or any coderag client.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local clients = get_clients()
  for _, c in ipairs(clients) do
    local attached
    if vim.lsp.buf_is_attached then
      attached = vim.lsp.buf_is_attached(bufnr, c.id)
    else -- 0.7
      attached = vim.lsp.buf_get_clients(bufnr)[c.id] ~= nil
    end
    if attached then return c end
  end
  return clients[1]
end

local function on_attach(client, bufnr)
  if M.config.codelens then
    local group = vim.api.nvim_create_augroup('coderag_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave', 'BufWritePost' }, {
      group = group,
      buffer = bufnr,
      callback = function() M.refresh_codelens(bufnr) end,
    })
    M.refresh_codelens(bufnr)
  end
  -- K is hover; keep a user's own mapping.
  if vim.fn.maparg('K', 'n') == '' then
    vim.keymap.set('n', 'K', vim.lsp.buf.hover, { buffer = bufnr, desc = 'coderag hover' })
  end
  if M.config.on_attach then M.config.on_attach(client, bufnr) end
end

function M.refresh_codelens(bufnr)
  if not vim.lsp.codelens then return end
  if has('nvim-0.10') then
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  elseif bufnr == nil or bufnr == vim.api.nvim_get_current_buf() then
    pcall(vim.lsp.codelens.refresh)
  end
end

local function lsp_config(root)
  local caps = M.config.capabilities or vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return {
    name = 'coderag',
    cmd = M.config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = M.config.init_options,
    capabilities = caps,
    on_attach = on_attach,
    handlers = {
      ['$/progress'] = function(err, result, ctx, config)
        M.on_progress(result)
        local h = vim.lsp.handlers['$/progress']
        if h then return h(err, result, ctx, config) end
      end,
    },
  }
end

--- Attaches the server to a buffer (starting one per workspace root).
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' then return end
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local root = find_root(fname)
  if vim.lsp.start then
    local id = vim.lsp.start(lsp_config(root), { bufnr = bufnr })
    if id then M.client_ids[root] = id end
    return id
  end
  local id = M.client_ids[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(lsp_config(root))
    if not id then
      notify('could not start ' .. table.concat(M.config.cmd, ' '), vim.log.levels.ERROR)
      return
    end
    M.client_ids[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

M.progress = nil -- last indexing progress: { title, message, percentage, done }

function M.on_progress(result)
  if not result or type(result.value) ~= 'table' then return end
  local v = result.value
  local p = M.progress or {}
  if v.kind == 'begin' then p = { title = v.title } end
  p.message = v.message or p.message
  p.percentage = v.percentage or p.percentage
  p.done = v.kind == 'end'
  M.progress = p
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'CodeRagProgress', modeline = false })
end

--- For the statusline: "CodeRAG indexing 40%" while indexing, '' after.
function M.statusline()
  local p = M.progress
  if not p or p.done then return '' end
  return string.format('CodeRAG %s%s', p.title or 'indexing',
    p.percentage and (' ' .. p.percentage .. '%%') or '')
end

--- coderag/status; callback(err, status).
function M.status(callback, bufnr)
  local client = M.client(bufnr)
  if not client then return callback('no coderag client') end
  request(client, 'coderag/status', vim.empty_dict(), function(err, result)
    callback(err, result)
  end, bufnr)
end

-- Citation helpers --------------------------------------------------------

local function cite_file(c)
  if c.uri then return vim.uri_to_fname(c.uri) end
  return c.path
end

local function cite_label(c)
  if c.startLine == c.endLine then return string.format('%s:%d', c.path, c.startLine) end
  return string.format('%s:%d-%d', c.path, c.startLine, c.endLine)
end

--- Quickfix items for a result's verified citations (text = symbol).
function M.qf_items(result)
  local items = {}
  for _, c in ipairs(result.citations or {}) do
    table.insert(items, {
      filename = cite_file(c),
      lnum = c.startLine,
      end_lnum = c.endLine,
      col = 1,
      text = (c.symbol and c.symbol ~= vim.NIL and c.symbol ~= '') and c.symbol or ('module code ' .. cite_label(c)),
      type = 'I',
    })
  end
  return items
end

local float_win = nil

local function close_float()
  if float_win and vim.api.nvim_win_is_valid(float_win) then
    vim.api.nvim_win_close(float_win, true)
  end
  float_win = nil
end

--- Opens citation i of the last answer (1-based) in the previous window.
function M.open_citation(i)
  if not M.last then return end
  local c = M.last.result.citations[i]
  if not c then return end
  close_float()
  vim.cmd('edit ' .. vim.fn.fnameescape(cite_file(c)))
  vim.api.nvim_win_set_cursor(0, { c.startLine, 0 })
  vim.cmd('normal! zv')
end

local function answer_lines(question, result)
  local lines = { '# ' .. question, '' }
  for _, l in ipairs(vim.split(result.answer or '', '\n', { plain = true })) do
    table.insert(lines, l)
  end
  while lines[#lines] == '' do table.remove(lines) end
  table.insert(lines, '')
  table.insert(lines, '## Citations (verified) — <CR> opens, :cnext walks them')
  local cite_rows = {}
  for i, c in ipairs(result.citations or {}) do
    table.insert(lines, string.format('%d. [%s] %s', i, cite_label(c),
      (c.symbol and c.symbol ~= vim.NIL) and c.symbol or ''))
    cite_rows[#lines] = i
  end
  if result.rejected and #result.rejected > 0 then
    table.insert(lines, '')
    table.insert(lines, '## Rejected citations')
    for _, r in ipairs(result.rejected) do
      table.insert(lines, string.format('- %s — %s', r.text, r.reason))
    end
  end
  if result.indexing then
    table.insert(lines, '')
    table.insert(lines, '_The index was still being built; ask again for a complete answer._')
  end
  return lines, cite_rows
end

--- Shows an answer in a floating window.
function M.show_answer(question, result)
  close_float()
  local lines, cite_rows = answer_lines(question, result)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  local fc = M.config.float
  local width = 20
  for _, l in ipairs(lines) do width = math.max(width, vim.fn.strdisplaywidth(l)) end
  width = math.min(width + 2, fc.max_width, vim.o.columns - 4)
  local height = math.min(#lines, fc.max_height, math.max(vim.o.lines - 6, 3))
  float_win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.max(math.floor((vim.o.lines - height) / 2) - 1, 0),
    col = math.max(math.floor((vim.o.columns - width) / 2), 0),
    style = 'minimal',
    border = fc.border,
  })
  vim.wo[float_win].wrap = true
  vim.wo[float_win].conceallevel = 2
  local opts = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set('n', 'q', close_float, opts)
  vim.keymap.set('n', '<Esc>', close_float, opts)
  vim.keymap.set('n', '<CR>', function()
    local row = vim.api.nvim_win_get_cursor(0)[1]
    local i = cite_rows[row]
    if not i then
      -- a [path:a-b] marker under the cursor
      local line = vim.api.nvim_get_current_line()
      local col = vim.api.nvim_win_get_cursor(0)[2] + 1
      for s, path, a, b, e in line:gmatch('()%[([^%[%]:%s]+):(%d+)%-?(%d*)%]()') do
        if col >= s and col < e then
          for j, c in ipairs(M.last.result.citations) do
            local a1, b1 = tonumber(a), tonumber(b) or tonumber(a)
            if c.path == path and c.startLine <= b1 and a1 <= c.endLine then i = j break end
          end
        end
      end
    end
    if i then M.open_citation(i) end
  end, opts)
  return float_win
end

--- Sends coderag/ask. opts: { bufnr, mode, budget, float = true, callback = fn(err, result) }.
function M.ask(question, opts)
  opts = opts or {}
  if not question or question:match('^%s*$') then
    return notify('usage: :CodeRagAsk {question}', vim.log.levels.WARN)
  end
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return notify('no coderag server is attached (open a Python file)', vim.log.levels.WARN)
  end
  local params = { question = question }
  local mode = opts.mode or M.config.mode
  if mode then params.mode = mode end
  local budget = opts.budget or M.config.budget
  if budget then params.budget = budget end
  if vim.api.nvim_buf_get_name(bufnr) ~= '' and vim.bo[bufnr].buftype == '' then
    local win = vim.fn.bufwinid(bufnr)
    local cur = win ~= -1 and vim.api.nvim_win_get_cursor(win) or { 1, 0 }
    params.textDocument = { uri = vim.uri_from_bufnr(bufnr) }
    params.position = { line = cur[1] - 1, character = cur[2] }
  end
  M.handle_answer_request(client, 'coderag/ask', params, question, opts, bufnr)
end

function M.handle_answer_request(client, method, params, question, opts, bufnr)
  local function done(err, result)
    if err then
      notify(type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err), vim.log.levels.ERROR)
      if opts.callback then opts.callback(err, nil) end
      return
    end
    M.last = { question = question, result = result }
    vim.fn.setqflist({}, ' ', { title = 'CodeRAG: ' .. question, items = M.qf_items(result) })
    if opts.float ~= false then M.show_answer(question, result) end
    if M.config.open_quickfix then vim.cmd('copen') end
    M.refresh_codelens()
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'CodeRagAnswer', modeline = false })
    if opts.callback then opts.callback(nil, result) end
  end
  request(client, method, params, function(err, result)
    vim.schedule(function() done(err, result) end)
  end, bufnr)
end

-- The server's "Ask CodeRAG" code lens runs coderag.ask: show its answer.
local function ask_command(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id) or M.client(ctx.bufnr)
  if not client then return end
  local first = command.arguments and command.arguments[1]
  local question = type(first) == 'table' and first.question or tostring(first or '')
  M.handle_answer_request(client, 'workspace/executeCommand',
    { command = command.command, arguments = command.arguments }, question, {}, ctx.bufnr)
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
  vim.lsp.commands['coderag.ask'] = ask_command
  -- The counting lenses ("2 callers, 1 reference") have no command.
  if vim.lsp.commands[''] == nil then vim.lsp.commands[''] = function() end end

  local group = vim.api.nvim_create_augroup('coderag', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args) M.attach(args.buf) end,
  })
  -- Buffers already open when setup runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.tbl_contains(M.config.filetypes, vim.bo[b].filetype) then
      M.attach(b)
    end
  end

  vim.api.nvim_create_user_command('CodeRagAsk', function(a) M.ask(a.args) end,
    { nargs = '+', desc = 'Ask CodeRAG about this codebase' })
  vim.api.nvim_create_user_command('CodeRagCitations', function()
    if not M.last then return notify('no answer yet') end
    vim.fn.setqflist({}, ' ', { title = 'CodeRAG: ' .. M.last.question, items = M.qf_items(M.last.result) })
    vim.cmd('copen')
  end, { desc = 'Quickfix list of the last answer\'s citations' })
  vim.api.nvim_create_user_command('CodeRagStatus', function()
    M.status(function(err, s)
      vim.schedule(function()
        if err then return notify(tostring(type(err) == 'table' and err.message or err), vim.log.levels.ERROR) end
        notify(string.format('%s: %s files, %s chunks%s', s.state, s.files or 0, s.chunks or 0,
          (s.message and s.message ~= '' and s.message ~= vim.NIL) and (' — ' .. s.message) or ''))
      end)
    end)
  end, { desc = 'CodeRAG index status' })
  vim.api.nvim_create_user_command('CodeRagReindex', function()
    local client = M.client()
    if client then
      request(client, 'workspace/executeCommand', { command = 'coderag.reindex' }, function() end)
    end
  end, { desc = 'Rebuild the CodeRAG index' })
end

return M
