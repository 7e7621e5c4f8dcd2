-- Each workspace's answers across restarts: a JSON file per workspace root under
-- stdpath('data')/coderag/history/ (the root's path with its slashes as '%', as 'undodir' does).
local H = {}

--- The file keeping `root`'s answers in folder `dir`.
function H.file(dir, root)
  return dir .. '/' .. root:gsub('[/\\:]', '%%') .. '.json'
end

--- `root`'s saved answers ({ question, result, time, root }, oldest first), or {}.
function H.load(dir, root)
  if not dir or not root then return {} end
  local f = io.open(H.file(dir, root), 'r')
  if not f then return {} end
  local text = f:read('*a')
  f:close()
  local ok, v = pcall(vim.json.decode, text, { luanil = { object = true, array = true } })
  if not ok or type(v) ~= 'table' or type(v.answers) ~= 'table' then return {} end
  local out = {}
  for _, h in ipairs(v.answers) do
    if type(h) == 'table' and type(h.question) == 'string' and type(h.result) == 'table' then
      h.root = root
      h.time = tonumber(h.time) or 0
      table.insert(out, h)
    end
  end
  return out
end

--- Writes `answers` (oldest first) as `root`'s; returns an error message or nil.
function H.save(dir, root, answers)
  if not dir or not root then return nil end
  if vim.fn.isdirectory(dir) == 0 and vim.fn.mkdir(dir, 'p') == 0 then return 'cannot create ' .. dir end
  local list = {}
  for _, h in ipairs(answers) do
    table.insert(list, { question = h.question, result = h.result, time = h.time })
  end
  local ok, text = pcall(vim.json.encode, { root = root, answers = list })
  if not ok then return text end
  local file = H.file(dir, root)
  local tmp = file .. '.tmp'
  local f, err = io.open(tmp, 'w')
  if not f then return err end
  f:write(text)
  f:close()
  local renamed, rerr = os.rename(tmp, file)
  if not renamed then return rerr end
end

--- Puts the `saved` answers missing from `history` (both oldest first) before the others:
--- they come from an earlier session.
function H.merge(history, saved)
  local seen = {}
  for _, h in ipairs(history) do seen[(h.root or '') .. '\0' .. h.time .. '\0' .. h.question] = true end
  local n = 0
  for _, h in ipairs(saved) do
    if not seen[(h.root or '') .. '\0' .. h.time .. '\0' .. h.question] then
      n = n + 1
      table.insert(history, n, h)
    end
  end
end

return H
