-- nvim_test.lua part: streaming with progress, cancel, follow-ups, the history (across
-- restarts), an off-topic question.
local T = ...
local check, LIMIT = T.check, T.LIMIT
local coderag, client, ws, bin, index_dir = T.coderag, T.client, T.ws, T.bin, T.index_dir
local src_win, progress, render = T.src_win, T.progress, T.render
local panel, last_entry, close_panel = T.panel, T.last_entry, T.close_panel
local float_wins, close_floats, buf_text, visible_line = T.float_wins, T.close_floats, T.buf_text, T.visible_line
local llm_control = T.llm_control

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

-- An LLM answer that cites nothing: the server cites its best context (origin "fallback"),
-- labelled the server's pick, not the model's verified citation.
llm_control('reset', { actions = { chat = { { content = 'Tax is added to the subtotal when the total is computed.' } } } })
got = nil
coderag.ask('How is tax applied to an order total?', { mode = 'llm', callback = function(e, r) got = { e = e, r = r } end })
vim.wait(LIMIT, function() return got ~= nil end, 20)
llm_control('reset', {})
local fallback = got and got.r and got.r.citations and got.r.citations[1]
check(fallback and fallback.origin == 'fallback' and last_entry():find("the server's pick: the answer cited nothing", 1, true) ~= nil,
  "an LLM answer citing nothing: the server's fallback citation is labelled its pick",
  vim.inspect(fallback) .. ' ' .. (last_entry():match('## Citations[^\n]*') or ''))
close_panel()
