-- coderag.nvim: ask questions about a codebase (Python, C, C++, Go, Rust, Java, JavaScript,
-- TypeScript) through the coderag language server, in a chat panel, and walk the verified
-- citations.
--
--   require('coderag').setup({ cmd = { 'coderag', 'lsp' } })
--
-- Works on Neovim 0.7 (vim.lsp.start_client + buf_attach_client) and on
-- 0.8+ (vim.lsp.start); newer APIs are feature-detected.
local render = require('coderag.render')
local rootmod = require('coderag.root')
local progress = require('coderag.progress')
local ui = require('coderag.ui')

local M = {}

M.config = {
  cmd = { 'coderag', 'lsp' },
  filetypes = { 'python', 'c', 'cpp', 'go', 'rust', 'java', 'javascript', 'javascriptreact',
                'typescript', 'typescriptreact' },
  -- The root rule (see editors/README.md): nearest VCS root, else nearest project marker, else
  -- the folder Neovim was opened in. A function(fname) -> dir, or a string, overrides it.
  root_dir = nil,
  -- initializationOptions, flat ({ ['llm.url'] = ... }) or nested ({ llm = { url = ... } }).
  init_options = {},
  -- Sent with every question: 'auto', 'extractive' or 'llm'.
  mode = nil,
  budget = nil,
  codelens = true, -- refresh code lenses on BufEnter, CursorHold and InsertLeave
  -- The chat panel: a split on the right (or 'bottom'), `width` columns (default 40% of the screen).
  panel = { position = 'right', width = nil, height = 15, focus = true, max_entries = 50 },
  float = { border = 'rounded', max_width = 100, max_height = 30 }, -- :CodeRagHover's float
  open_quickfix = false, -- :copen after each answer
  progress = true, -- progress through vim.notify (nvim-notify replaces its message; else one echo line)
  statusline = true, -- with no 'statusline' of your own: the default one plus the progress component
  history_size = 20, -- answers kept per workspace for :CodeRagHistory (also across restarts)
  -- where each workspace's answers are kept (a JSON file per root); false: this session only
  history_dir = vim.fn.stdpath('data') .. '/coderag/history',
  followup_turns = 3, -- earlier turns a :CodeRagFollowup sends
  cancel_key = '<C-c>', -- in the answer float, and in attached buffers while a question runs
  on_attach = nil,
  capabilities = nil,
}

M.history = {} -- { question, result, time, root }, oldest first (every workspace's)
M.last = nil -- the newest entry of M.history
M.pending = nil -- the running question: { question, client, id, token, text, message, ... }
M.client_ids = {} -- root -> client id
M.opened_dir = (vim.uv or vim.loop).cwd() -- the folder Neovim was opened in

local has = function(f) return vim.fn.has(f) == 1 end
local history = require('coderag.history')
local seq = 0

local function notify(msg, level)
  vim.notify('coderag: ' .. msg, level or vim.log.levels.INFO)
end

-- client:request(...) on 0.11+, client.request(...) before.
local function request(client, method, params, handler, bufnr)
  if has('nvim-0.11') then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

local function cancel_request(client, id)
  if has('nvim-0.11') then return client:cancel_request(id) end
  return client.cancel_request(id)
end

local function get_clients()
  if vim.lsp.get_clients then return vim.lsp.get_clients({ name = 'coderag' }) end
  local out = {}
  for _, c in pairs(vim.lsp.get_active_clients()) do
    if c.name == 'coderag' then table.insert(out, c) end
  end
  return out
end

--- The workspace root for a file name, by the root rule (or the user's root_dir).
function M.find_root(fname)
  local cfg = M.config
  if type(cfg.root_dir) == 'function' then
    local r = cfg.root_dir(fname)
    if r then return r end
  elseif type(cfg.root_dir) == 'string' then
    return (vim.fn.fnamemodify(cfg.root_dir, ':p'):gsub('(.)/$', '%1'))
  end
  local root, how = rootmod.find(fname, M.opened_dir)
  if how == 'file' then
    notify(string.format('%s has no VCS or project root and lies outside %s: indexing %s', fname,
      M.opened_dir, root), vim.log.levels.WARN)
  end
  return root
end

--- The coderag client attached to a buffer, or nil.
function M.attached_client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  for _, c in ipairs(get_clients()) do
    local attached
    if vim.lsp.buf_is_attached then
      attached = vim.lsp.buf_is_attached(bufnr, c.id)
    else -- 0.7
      attached = vim.lsp.buf_get_clients(bufnr)[c.id] ~= nil
    end
    if attached then return c end
  end
end

--- The coderag client for a buffer (attached to it), or any coderag client.
function M.client(bufnr)
  return M.attached_client(bufnr) or get_clients()[1]
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
  -- K is hover (every attached server's, in one float); keep a user's own mapping.
  if vim.fn.maparg('K', 'n') == '' then
    vim.keymap.set('n', 'K', function() M.hover_all() end, { buffer = bufnr, desc = 'hover: every server, one float' })
  end
  if M.config.cancel_key and vim.fn.maparg(M.config.cancel_key, 'n') == '' then
    vim.keymap.set('n', M.config.cancel_key, function()
      if not M.cancel() then
        vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(M.config.cancel_key, true, false, true), 'n', false)
      end
    end, { buffer = bufnr, desc = 'coderag: cancel the running question' })
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

-- $/progress: a question's tokens go to its pending state, the rest (indexing) to the
-- statusline; work-done values are passed on to vim.lsp.handlers['$/progress'] (fidget).
local function on_progress(err, result, ctx, config)
  if type(result) ~= 'table' or type(result.value) ~= 'table' then return end
  local p = M.pending
  if p and result.token == p.partial_token then
    return M.on_partial(p, result.value)
  end
  if M.last_token == result.token and not p then
    progress.update('ask', result.value) -- the end of a question already cancelled here
  elseif p and result.token == p.token then
    p.message = result.value.message ~= vim.NIL and result.value.message or p.message
    progress.update('ask', result.value)
    ui.refresh(M)
  else
    progress.update('index', result.value)
    if result.value.kind == 'end' and M.reask then vim.schedule(M.reask_now) end
  end
  local h = vim.lsp.handlers['$/progress']
  if h then pcall(h, err, result, ctx, config) end
end

M.request, M.notify = request, notify
local nav = require('coderag.nav')(M)

M.on_progress = on_progress

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
    handlers = { ['$/progress'] = on_progress, ['textDocument/hover'] = nav.on_hover },
    commands = { [''] = nav.count_lens },
  }
end

--- Attaches the server to a buffer (starting one per workspace root).
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' then return end
  if vim.fn.executable(M.config.cmd[1]) ~= 1 then
    M.missing = M.config.cmd[1]
    if not M.missing_told then
      M.missing_told = true
      -- Once, as a warning, after the autocommand that attached: an error inside a FileType
      -- autocommand reads "Error detected while processing FileType Autocommands" with a
      -- hit-enter prompt on Neovim 0.7.
      local msg = string.format('"%s" is not an executable: build coderag and put it on PATH, or set cmd in setup()',
        M.config.cmd[1])
      vim.schedule(function() notify(msg, vim.log.levels.WARN) end)
    end
    return
  end
  M.missing = nil
  local root = M.find_root(vim.api.nvim_buf_get_name(bufnr))
  M.load_history(root)
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

--- Statusline component: "CodeRAG Indexing 40% 812/1984 files", a question's progress, or ''.
function M.statusline() return progress.statusline() end
M.progress_state = progress

--- coderag/status; callback(err, status).
function M.status(callback, bufnr)
  local client = M.client(bufnr)
  if not client then return callback('no coderag client') end
  request(client, 'coderag/status', vim.empty_dict(), function(err, result) callback(err, result) end, bufnr)
end

--- Quickfix items for a result's verified citations (text = symbol).
function M.qf_items(result)
  local items = {}
  for _, c in ipairs(result.citations or {}) do
    table.insert(items, {
      filename = c.uri and vim.uri_to_fname(c.uri) or c.path,
      lnum = c.startLine,
      end_lnum = c.endLine,
      col = 1,
      text = (type(c.symbol) == 'string' and c.symbol ~= '') and c.symbol or ('module code ' .. render.cite_label(c)),
      type = 'I',
    })
  end
  return items
end

--- The workspace root of `bufnr` (its client's), or of the last answer.
function M.root_of(bufnr)
  local c = M.client(bufnr)
  return (c and c.config and c.config.root_dir) or (M.last and M.last.root) or nil
end

--- This workspace's kept answers, oldest first.
function M.workspace_history(root)
  root = root or M.root_of()
  if not root then return M.history end
  local out = {}
  for _, h in ipairs(M.history) do
    if h.root == root then table.insert(out, h) end
  end
  return out
end

--- Reads a workspace's saved answers into M.history (once a session).
M.history_loaded = {}
function M.load_history(root)
  if not root or M.history_loaded[root] then return end
  M.history_loaded[root] = true
  history.merge(M.history, history.load(M.config.history_dir, root))
  if not M.last then M.last = M.history[#M.history] end
end

-- The turns a follow-up sends: this workspace's last answers, oldest first.
function M.history_turns(n)
  local turns, hist = {}, M.workspace_history()
  for i = math.max(1, #hist - (n or M.config.followup_turns) + 1), #hist do
    local h = hist[i]
    table.insert(turns, { question = h.question, answer = h.result.answer or '' })
  end
  return turns
end

local function remember(question, result, root)
  M.load_history(root)
  table.insert(M.history, { question = question, result = result, time = os.time(), root = root })
  local mine = M.workspace_history(root)
  while #mine > M.config.history_size do
    local drop = table.remove(mine, 1)
    for i, h in ipairs(M.history) do
      if h == drop then table.remove(M.history, i) break end
    end
  end
  M.last = M.history[#M.history]
  local err = history.save(M.config.history_dir, root, M.workspace_history(root))
  if err then notify('could not save the history: ' .. err, vim.log.levels.WARN) end
end

--- The params of a question asked from `bufnr`.
function M.ask_params(question, opts, bufnr)
  local params = { question = question }
  local mode = opts.mode or M.config.mode
  if mode then params.mode = mode end
  local budget = opts.budget or M.config.budget
  if budget then params.budget = budget end
  if opts.followup and #M.workspace_history() > 0 then params.history = M.history_turns() end
  if vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) ~= '' and vim.bo[bufnr].buftype == '' then
    local win = vim.fn.bufwinid(bufnr)
    local cur = win ~= -1 and vim.api.nvim_win_get_cursor(win) or { 1, 0 }
    params.textDocument = { uri = vim.uri_from_bufnr(bufnr) }
    params.position = { line = cur[1] - 1, character = cur[2] }
  end
  return params
end

--- Why no coderag client serves `bufnr`: the message a command gives.
function M.why_no_client(bufnr)
  if M.missing then
    return string.format('the coderag server is not running: "%s" is not an executable (set cmd in setup())', M.missing)
  end
  local ft = vim.bo[bufnr or 0].filetype
  if #get_clients() == 0 then
    return string.format('the coderag server is not running (no buffer of %s has been opened yet)',
      table.concat(M.config.filetypes, ', '))
  end
  return string.format('coderag is not attached to this buffer (filetype "%s" is not in setup\'s filetypes)', ft)
end

--- Prompts for a question (vim.ui.input) and asks it. opts as M.ask's.
function M.prompt_ask(opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= '' then
    -- from the panel: the question goes to the workspace of the answers shown
    local w = vim.fn.win_getid(vim.fn.winnr('#'))
    bufnr = w ~= 0 and vim.api.nvim_win_get_buf(w) or bufnr
  end
  vim.ui.input({ prompt = opts.followup and 'Follow-up question: ' or 'Ask CodeRAG: ' }, function(q)
    if q and not q:match('^%s*$') then M.ask(q, vim.tbl_extend('force', opts, { bufnr = bufnr })) end
  end)
end

--- Sends coderag/ask. opts: { bufnr, mode, budget, followup, float = true, callback = fn(err, result) }.
function M.ask(question, opts)
  opts = opts or {}
  if not question or question:match('^%s*$') then return M.prompt_ask(opts) end
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  -- a file coderag should serve, not attached because the binary is missing: say that
  if not client or (M.missing and not M.attached_client(bufnr) and vim.bo[bufnr].buftype == ''
      and vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype)) then
    return notify(M.why_no_client(bufnr), vim.log.levels.WARN)
  end
  M.start_request(client, 'coderag/ask', M.ask_params(question, opts, bufnr), question, opts, bufnr)
end

--- A partial result: the stage "context" (where the answer will come from) or "writing"
--- (the text so far, provisional).
function M.on_partial(p, v)
  if type(v.answer) == 'string' and v.answer ~= '' then p.text = v.answer end
  if type(v.context) == 'table' then p.context = v.context end
  if type(v.match) == 'string' then p.match = v.match end
  p.partials = (p.partials or 0) + 1
  ui.refresh(M)
  pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'CodeRagPartial', modeline = false })
end

--- Sends a question (coderag/ask, or workspace/executeCommand for coderag.ask/explain) with
--- progress and partial-result tokens, shows it at once and streams into the float.
function M.start_request(client, method, params, question, opts, bufnr)
  if M.pending then M.cancel() end
  seq = seq + 1
  local token = string.format('coderag-ask-%d-%d', vim.fn.getpid(), seq)
  local target = method == 'coderag/ask' and params or params.arguments[1]
  target.workDoneToken = token
  target.partialResultToken = token .. '-partial'
  local root = client.config and client.config.root_dir
  local p = { question = question, client = client, token = token, partial_token = token .. '-partial',
    message = 'asking', text = '', float = opts.float ~= false, started = (vim.uv or vim.loop).hrtime() }
  M.pending = p
  M.last_token = token
  progress.update('ask', { kind = 'begin', title = 'CodeRAG', message = 'asking' })
  local key = opts.key or p
  if p.float then ui.show(M, { question = question, pending = p, key = key, root = root }) end
  local function done(err, result)
    if p.finished then return end -- a reply after a cancel
    p.finished = true
    if M.pending == p then M.pending = nil end
    if err then
      local cancelled = type(err) == 'table' and err.code == -32800
      progress.finish_ask(p.cancel_sent and 'cancel sent' or cancelled and 'cancelled' or 'failed')
      if cancelled then p.cancelled = true else
        p.error = 'Error: ' .. (type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err))
        -- The panel shows it; one more echo line after the progress's would ask for Enter.
        if not p.float then notify(p.error, vim.log.levels.ERROR) end
      end
      if p.float then ui.show(M, { question = question, pending = p, key = key, root = root }) end
      if opts.callback then opts.callback(err, nil) end
      return
    end
    progress.finish_ask('done')
    -- an explanation's result names its definition ("Explain `Headers.render`")
    if type(result) == 'table' and type(result.title) == 'string' then question = result.title end
    remember(question, result, root)
    vim.fn.setqflist({}, ' ', { title = 'CodeRAG: ' .. question, items = M.qf_items(result) })
    if p.float then ui.show(M, { question = question, result = result, key = key, root = root }) end
    if type(result) == 'table' and result.indexing == true then
      M.reask = { client_id = client.id, method = method, params = params, question = question, opts = opts,
        bufnr = bufnr, key = key }
    end
    if M.config.open_quickfix then vim.cmd('copen') end
    M.refresh_codelens()
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'CodeRagAnswer', modeline = false })
    if opts.callback then opts.callback(nil, result) end
  end
  p.done = done
  local ok, id = request(client, method, params, function(err, result)
    vim.schedule(function() done(err, result) end)
  end, bufnr)
  if not ok then
    M.pending = nil
    progress.finish_ask('failed')
    return notify('the server is not running', vim.log.levels.ERROR)
  end
  p.id = id
  return p
end

--- Asks again the question answered while the index was being built (its result said
--- `indexing`), now that indexing ended; the new answer replaces it in the panel.
function M.reask_now()
  local r = M.reask
  M.reask = nil
  if not r or M.pending then return end
  local client = vim.lsp.get_client_by_id(r.client_id)
  if not client then return end
  local params = vim.deepcopy(r.params)
  local target = r.method == 'coderag/ask' and params or params.arguments[1]
  target.workDoneToken, target.partialResultToken = nil, nil
  M.start_request(client, r.method, params, r.question, vim.tbl_extend('force', r.opts, { key = r.key }), r.bufnr)
end

--- Cancels the running question ($/cancelRequest). Returns true when there was one.
--- Neovim's RPC layer swallows the server's RequestCancelled reply, so the question ends
--- here; the server's work-done progress then ends with "cancelled".
function M.cancel()
  local p = M.pending
  if not p or not p.id then return false end
  p.cancel_sent = true
  cancel_request(p.client, p.id)
  p.done({ code = -32800, message = 'cancelled' }, nil)
  return true
end

-- The server's commands in lenses and code actions: coderag.ask ("Ask CodeRAG") and
-- coderag.explain ("Explain `NAME` with the LLM", or without an LLM "Show `NAME` and its
-- callers", mode "extractive"): stream and show the answer in the panel.
local function ask_command(command, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id) or M.client(ctx.bufnr)
  if not client then return end
  local first = command.arguments and command.arguments[1]
  local arg = type(first) == 'table' and vim.deepcopy(first) or { question = tostring(first or '') }
  -- shown until the result's title replaces it
  local title = type(command.title) == 'string' and command.title:gsub('%s*%(CodeRAG%)$', '') or ''
  M.start_request(client, 'workspace/executeCommand', { command = command.command, arguments = { arg } },
    arg.question or (title ~= '' and title) or 'Explain', {}, ctx.bufnr)
end

--- Explains the definition under the cursor (coderag.explain): runs the explain action the
--- server offers there (with the LLM, or without one its extractive "Show `NAME` and its
--- callers"); with none offered, asks the LLM's explanation (the server says why it cannot).
function M.explain(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then return notify(M.why_no_client(bufnr), vim.log.levels.WARN) end
  local cur = vim.api.nvim_win_get_cursor(0)
  local pos = { line = cur[1] - 1, character = cur[2] }
  local arg = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = pos }
  local word = vim.fn.expand('<cword>')
  local params = { textDocument = arg.textDocument, range = { start = pos, ['end'] = pos }, context = { diagnostics = {} } }
  request(client, 'textDocument/codeAction', params, function(_, actions)
    vim.schedule(function()
      for _, a in ipairs(type(actions) == 'table' and actions or {}) do
        local c = type(a.command) == 'table' and a.command or a
        if c.command == 'coderag.explain' then return ask_command(c, { client_id = client.id, bufnr = bufnr }) end
      end
      M.start_request(client, 'workspace/executeCommand', { command = 'coderag.explain', arguments = { arg } },
        'Explain `' .. word .. '`', {}, bufnr)
    end)
  end, bufnr)
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('CodeRagAsk', function(a) M.ask(a.args) end,
    { nargs = '*', desc = 'Ask CodeRAG about this codebase (no argument: a prompt)' })
  cmd('CodeRagFollowup', function(a) M.ask(a.args, { followup = true }) end,
    { nargs = '*', desc = 'Ask a follow-up question (sends the last answers as history)' })
  cmd('CodeRagChat', function()
    if ui.panel_win() then return vim.api.nvim_set_current_win(ui.panel_win()) end
    if #ui.state.entries == 0 then
      -- after a restart: this workspace's last answers, kept in its history
      local hist = M.workspace_history()
      for i = math.max(1, #hist - M.config.followup_turns + 1), #hist do
        local h = hist[i]
        table.insert(ui.state.entries, { question = h.question, result = h.result, root = h.root })
      end
    end
    ui.show_panel(M)
  end, { desc = 'Open the CodeRAG chat panel (after a restart: the last answers of this workspace)' })
  cmd('CodeRagHover', function() M.hover() end, { desc = "coderag's hover for the name under the cursor" })
  cmd('CodeRagCancel', function()
    if not M.cancel() then notify('no question is running') end
  end, { desc = 'Cancel the running CodeRAG question' })
  cmd('CodeRagExplain', function() M.explain() end,
    { desc = 'Explain the definition under the cursor (with the LLM; without one, show it and its callers)' })
  cmd('CodeRagHistory', function() ui.pick_history(M) end, { desc = 'Reopen one of the last answers' })
  cmd('CodeRagContext', function()
    if not M.last then return notify('no answer yet') end
    local n = #ui.state.entries
    local e = ui.state.entries[n]
    if not (e and e.result == M.last.result) then
      ui.show(M, { question = M.last.question, result = M.last.result, root = M.last.root })
      n = #ui.state.entries
    end
    if not ui.state.entries[n].show_context then ui.toggle_context(M, n) end
  end, { desc = 'The context the last answer used (scores, via)' })
  cmd('CodeRagCitations', function()
    if not M.last then return notify('no answer yet') end
    vim.fn.setqflist({}, ' ', { title = 'CodeRAG: ' .. M.last.question, items = M.qf_items(M.last.result) })
    vim.cmd('copen')
  end, { desc = 'Quickfix list of the last answer\'s citations' })
  cmd('CodeRagStatus', function()
    M.status(function(err, s)
      vim.schedule(function()
        if err then return notify(tostring(type(err) == 'table' and err.message or err), vim.log.levels.ERROR) end
        notify(render.status_text(s))
      end)
    end)
  end, { desc = 'CodeRAG index status' })
  cmd('CodeRagReindex', function()
    local client = M.client()
    if client then request(client, 'workspace/executeCommand', { command = 'coderag.reindex' }, function() end) end
  end, { desc = 'Rebuild the CodeRAG index' })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', M.config, opts or {})
  progress.notify_enabled = M.config.progress and true or false
  vim.lsp.commands['coderag.ask'] = ask_command
  vim.lsp.commands['coderag.explain'] = ask_command
  if M.config.statusline and vim.o.statusline == '' then vim.o.statusline = progress.default_statusline end
  ui.define_highlights()

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
  define_commands()
end

return M
