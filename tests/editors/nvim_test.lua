-- Headless Neovim test of editors/nvim against the real server.
--   CODERAG_BIN=... CODERAG_WS=<copy of tests/fixtures/shop> CODERAG_INDEX_DIR=... \
--   nvim --headless -u NONE -i NONE --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim_test.lua'
-- Prints one line per check and "nvim: N passed, N failed"; exits non-zero on failure.
-- This file starts the server and waits for the index; the checks are in its parts
-- (nvim_ask.lua, nvim_panel.lua, ...), run in order in this one Neovim with one server,
-- each given the table T of what they share.
local passed, failed = 0, 0
local llm -- the fake LLM (start_fake_llm)
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


  -- The parts, in order: later ones rely on the answers and history earlier ones left.
  local dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
  local T = { check = check, LIMIT = LIMIT, llm = llm, llm_control = llm_control, coderag = coderag,
    client = client, ws = ws, bin = bin, index_dir = index_dir, src_win = vim.api.nvim_get_current_win(),
    progress = require('coderag.progress'), render = require('coderag.render'), tmp = vim.fn.tempname(),
    panel = panel, last_entry = last_entry, close_panel = close_panel, float_wins = float_wins,
    close_floats = close_floats, buf_text = buf_text, visible_line = visible_line }
  for _, part in ipairs({ 'nvim_ask', 'nvim_panel', 'nvim_history', 'nvim_nav', 'nvim_index' }) do
    local okp, errp = xpcall(function() assert(loadfile(dir .. '/' .. part .. '.lua'))(T) end, debug.traceback)
    if not okp then check(false, 'test script error in ' .. part, errp) end
  end
end, debug.traceback)

if not ok then check(false, 'test script error', err) end
finish()
