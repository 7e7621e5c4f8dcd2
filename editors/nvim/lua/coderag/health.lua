-- :checkhealth coderag - the binary, its version, this folder's index, the LLM setting.
-- vim.health (0.9+) or the `health` module of 0.7/0.8.
local M = {}

local function reporter()
  local mods = { vim.health or {} }
  local has_old, old = pcall(require, 'health')
  if has_old and type(old) == 'table' then table.insert(mods, old) end
  local function pick(new, legacy)
    for _, h in ipairs(mods) do
      if type(h[new]) == 'function' then return h[new] end
      if type(h[legacy]) == 'function' then return h[legacy] end
    end
    return function(msg) print(msg) end
  end
  return {
    start = pick('start', 'report_start'),
    ok = pick('ok', 'report_ok'),
    warn = pick('warn', 'report_warn'),
    error = pick('error', 'report_error'),
    info = pick('info', 'report_info'),
  }
end

-- Output of a command (a list), and whether it exited 0.
local function run(cmd)
  local out = vim.fn.system(cmd)
  return out, vim.v.shell_error == 0
end

-- The LLM setting: the plugin's init_options (flat or nested), else the server's environment.
local function llm_setting(cfg)
  local o = cfg.init_options or {}
  local url = o['llm.url'] or (type(o.llm) == 'table' and o.llm.url) or nil
  if url and url ~= '' then return url, 'init_options' end
  local env = vim.env.CODERAG_LLM_URL
  if env and env ~= '' then return env, 'CODERAG_LLM_URL' end
  return nil
end

function M.check()
  local r = reporter()
  local ok_cfg, coderag = pcall(require, 'coderag')
  local cfg = ok_cfg and coderag.config or { cmd = { 'coderag', 'lsp' } }
  r.start('coderag: the server')
  local exe = cfg.cmd[1]
  local path = vim.fn.exepath(exe)
  if path == '' then
    r.error(string.format('%s is not an executable on PATH', exe),
      { 'Install the coderag package, or set require("coderag").setup({ cmd = { "/path/to/coderag", "lsp" } })' })
    return
  end
  r.ok('binary: ' .. path)
  local out, ok = run({ path, '--version' })
  if not ok then
    r.error('`' .. path .. ' --version` failed: ' .. vim.trim(out))
    return
  end
  r.ok('version: ' .. vim.trim(out):gsub('\n', ', '))

  r.start('coderag: this workspace')
  local found, fr = false, nil
  if ok_cfg and coderag.find_root then found, fr = pcall(coderag.find_root, vim.api.nvim_buf_get_name(0)) end
  local root = (found and type(fr) == "string" and fr ~= "") and fr or vim.fn.getcwd()
  local st, sok = run({ path, 'status', '--json', '--root', root })
  local decoded = sok and pcall(vim.fn.json_decode, st) and vim.fn.json_decode(st) or nil
  if not decoded then
    r.warn('`coderag status` failed for ' .. root .. ': ' .. vim.trim(st))
  elseif decoded.state == 'missing' then
    r.info('index: none yet for ' .. root .. ' (the server builds it when a file of the workspace opens)')
  else
    r.ok(string.format('index of %s: %s, %s files, %s chunks', root, tostring(decoded.state or 'ready'),
      tostring(decoded.files or '?'), tostring(decoded.chunks or '?')))
  end

  r.start('coderag: answers')
  local url, from = llm_setting(cfg)
  if url then
    r.ok(string.format('LLM: %s (%s)', url, from))
  else
    r.info('LLM: none set (init_options llm.url or CODERAG_LLM_URL): answers are extractive')
  end
end

return M
