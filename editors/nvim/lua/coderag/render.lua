-- Pure text of what the plugin shows: answers (provisional and final), the context an
-- answer used, status lines; and the size of a float for wrapped lines.
local R = {}

local function nonempty(s) return type(s) == 'string' and s ~= '' end

--- Splits `s` into pieces { text, code } on `code spans` (backticks kept in text).
local function split_code(s)
  local out, i = {}, 1
  while i <= #s do
    local a = s:find('`', i, true)
    local b = a and s:find('`', a + 1, true)
    if not b then
      table.insert(out, { text = s:sub(i), code = false })
      break
    end
    if a > i then table.insert(out, { text = s:sub(i, a - 1), code = false }) end
    table.insert(out, { text = s:sub(a, b), code = true })
    i = b + 1
  end
  return out
end

-- Words markdown would eat: a path, a dunder, any identifier with an underscore; `*args` and
-- `**kwargs` in a parameter list. Other stars are markup (**bold**) and stay.
local function protect_words(s)
  return (s:gsub('()(%**)([%w_%./%-]*[%w_])()', function(pos, stars, w, e)
    local before = pos > 1 and s:sub(pos - 1, pos - 1) or ''
    if before == '`' then return nil end
    local in_params = stars ~= '' and (before == '(' or s:sub(1, pos - 1):match(',%s*$'))
    if in_params then return '`' .. stars .. w .. '`' end
    if w:find('_', 1, true) or w:find('/', 1, true) and w:find('%.%w+$') then
      return stars .. '`' .. w .. '`'
    end
  end))
end

-- Text outside code spans: markdown's backslash escapes dropped (Neovim's markdown syntax shows
-- them: `nums\[i\]`), URLs kept whole (in a code span only when markdown would eat a `_` or `*`
-- of them), [path:a-b] citations in code spans, then loose words protected.
local function protect_text(text)
  text = text:gsub('\\([%[%]%(%)#!%.%-%+{}<>|_%*`\\])', '%1')
  local out, last = {}, 1
  local function plain(t)
    local parts, at = {}, 1
    for s, inner, e in t:gmatch('()%[([^%[%]%s`]+:%d+[^%[%]%s]*)%]()') do
      table.insert(parts, protect_words(t:sub(at, s - 1)))
      table.insert(parts, '[`' .. inner .. '`]')
      at = e
    end
    table.insert(parts, protect_words(t:sub(at)))
    return table.concat(parts)
  end
  for s, url, e in text:gmatch('()(%a[%w+.-]*://[^%s<>`%)%]]*[^%s<>`%)%]%.,;:!?\'"])()') do
    table.insert(out, plain(text:sub(last, s - 1)))
    -- markdown's emphasis starts at a `_` or `*` after a non-word character (`/_x`)
    table.insert(out, url:find('[^%w_*][_*]') and ('`' .. url .. '`') or url)
    last = e
  end
  table.insert(out, plain(text:sub(last)))
  return table.concat(out)
end

--- One line of answer text with citations and paths in code spans, so that markdown's
--- emphasis cannot hide underscores (`werkzeug/_reloader.py`, `__init__.py`).
-- A `*` touching a word outside **bold** and *emphasis* pairs ('double*', *L) opens an
-- emphasis in Neovim's markdown syntax that runs to the next star, lines or answers later,
-- swallowing the code spans between: the word goes in a code span.
local function lone_stars(text)
  local keep = {}
  local function hold(m)
    table.insert(keep, m)
    return '\1' .. #keep .. '\2'
  end
  text = text:gsub('%*%*[^%s*][^*]-%*%*', hold):gsub('%*[^%s*][^*]-[^%s*]%*', hold):gsub('%*[^%s*]%*', hold)
  text = text:gsub('[%w_%.%-/]*%*+[%w_%.%-/]*', function(w)
    if w:find('[^*]') then return '`' .. w .. '`' end
  end)
  return (text:gsub('\1(%d+)\2', function(i) return keep[tonumber(i)] end))
end

function R.protect(line)
  -- Markdown's syntax cannot nest a code span in bold: **`a/__init__.py`** loses underscores.
  line = line:gsub('%*%*(`[^`]+`)%*%*', '%1')
  local parts = {}
  for _, p in ipairs(split_code(line)) do
    if p.code then
      table.insert(parts, p.text)
    else
      table.insert(parts, protect_text(p.text))
    end
  end
  -- then the stars left outside code spans
  local out = {}
  for _, p in ipairs(split_code(table.concat(parts))) do
    table.insert(out, p.code and p.text or lone_stars(p.text))
  end
  return table.concat(out)
end

function R.cite_label(c)
  if c.startLine == c.endLine then return string.format('%s:%d', c.path, c.startLine) end
  return string.format('%s:%d-%d', c.path, c.startLine, c.endLine)
end

local function split_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  while #lines > 0 and lines[#lines]:match('^%s*$') do table.remove(lines) end
  return lines
end

-- Answer text lines, protected outside fenced code blocks.
-- A code span or a fence left open (an answer cut short) runs on in Neovim's markdown syntax
-- over every later line and answer of the panel: a line's lone backtick is closed at its end, an
-- open fence at the answer's end.
local function answer_body(text)
  local out, fenced = {}, false
  for _, l in ipairs(split_lines(text)) do
    if l:match('^%s*```') then
      fenced = not fenced
    elseif not fenced then
      l = R.protect(l)
      if select(2, l:gsub('`', '')) % 2 == 1 then l = l .. '`' end
    end
    table.insert(out, l)
  end
  if fenced then table.insert(out, '```') end
  return out
end

--- The context items of a result, highest score first (the order of the scores shown).
function R.sorted_context(result)
  local items = {}
  for i, c in ipairs(result.context or {}) do items[i] = c end
  table.sort(items, function(a, b)
    local x, y = tonumber(a.score) or 0, tonumber(b.score) or 0
    if x ~= y then return x > y end
    return (a.path or '') .. (a.startLine or 0) < (b.path or '') .. (b.startLine or 0)
  end)
  return items
end

--- Lines of the context an answer used: score, lines, symbol, how it was found.
function R.context_lines(result)
  local lines = {}
  for i, c in ipairs(R.sorted_context(result)) do
    local via = type(c.via) == 'table' and table.concat(c.via, '+') or ''
    table.insert(lines, string.format('%d. %.2f `%s` %s%s', i, tonumber(c.score) or 0, R.cite_label(c),
      nonempty(c.symbol) and ('`' .. c.symbol .. '` ') or '', via ~= '' and ('via ' .. via) or ''))
  end
  return lines
end

--- Whether a citation is the server's pick: origin "fallback" (the LLM cited nothing that
--- passed the checks, so the server cited its best context). An extractive answer's citations
--- (origin "extractive") are cited in its own text. Older servers send no origin: source "auto".
function R.server_pick(c)
  if type(c.origin) == 'string' then return c.origin == 'fallback' end
  return c.source == 'auto'
end

--- The heading of a citation list: verified, or the server's pick (R.server_pick).
function R.citations_heading(cites)
  local auto = 0
  for _, c in ipairs(cites) do
    if R.server_pick(c) then auto = auto + 1 end
  end
  if auto == 0 then return '## Citations (verified)' end
  if auto == #cites then return "## Citations (the server's pick: the answer cited nothing)" end
  return string.format("## Citations (%d verified, %d the server's pick)", #cites - auto, auto)
end

--- The float's content. `view` = { question, result?, pending?, show_context? } where pending
--- = { text, message, cancelled, error }. Returns lines, cite_rows (row -> citation index),
--- highlights ({ row, col, end_col, group }, 0-based rows).
function R.answer_view(view)
  local lines, cite_rows, hls = { '# ' .. view.question:gsub('\n', ' '), '' }, {}, {}
  local function add(l, group)
    table.insert(lines, l)
    if group then table.insert(hls, { #lines - 1, 0, -1, group }) end
  end
  local result, p = view.result, view.pending
  if not result then
    if p.error then
      add(p.error, 'ErrorMsg')
    elseif p.cancelled then
      add('Cancelled.', 'WarningMsg')
    else
      add(string.format('… %s  (<C-c> or :CodeRagCancel cancels)', p.message or 'asking'), 'CodeRagProgress')
    end
    if nonempty(p.text) then
      add('')
      add('Provisional — not yet verified:', 'CodeRagProvisional')
      for _, l in ipairs(answer_body(p.text)) do add(l, 'CodeRagProvisional') end
    end
    return lines, cite_rows, hls
  end
  if result.indexing == true then
    -- said first: the answer below comes from part of the workspace
    add('The index is still being built: this answer comes from the files indexed so far. ' ..
      'It is asked again when indexing ends.', 'WarningMsg')
    add('')
  end
  local partial = R.partial_index_text(result.partialIndex)
  if partial then
    add('The index is not whole (' .. partial .. '): this answer may miss code.', 'WarningMsg')
    add('')
  end
  local body = answer_body(result.answer)
  for i, l in ipairs(body) do
    -- The first line says plainly when nothing relevant was found.
    add(l, (i == 1 and (result.match == 'none' or result.match == 'weak')) and 'WarningMsg' or nil)
  end
  add('')
  add(R.citations_heading(result.citations or {}) .. ' — <CR> opens, :cnext walks them, c shows the context')
  for i, c in ipairs(result.citations or {}) do
    add(string.format('%d. [`%s`] %s%s', i, R.cite_label(c), nonempty(c.symbol) and ('`' .. c.symbol .. '`') or '',
      R.server_pick(c) and " (the server's pick: the answer cited nothing)" or ''))
    cite_rows[#lines] = i
  end
  if result.rejected and #result.rejected > 0 then
    add('')
    add('## Rejected citations (removed from the answer)')
    for _, r in ipairs(result.rejected) do
      add(string.format('- `%s` — %s', r.text, r.reason))
      local s = lines[#lines]:find('`', 1, true)
      table.insert(hls, { #lines - 1, s - 1, s + #r.text + 1, 'CodeRagRejected' })
    end
  end
  if view.show_context then
    add('')
    add('## Context the answer used (score, lines, symbol, via)')
    for _, l in ipairs(R.context_lines(result)) do add(l) end
  end
  return lines, cite_rows, hls
end

--- Screen rows one line takes with 'wrap' and 'linebreak' on, laid out as
--- Neovim does: a row breaks after a 'breakat' character when the next word
--- and the breakable characters after it would not fit (a word longer than
--- the row is cut where the row ends); a tab reaches the next tab stop; a
--- double-width character that does not fit starts the next row.
local function linebreak_rows(l, width, breakat, ts)
  local chars = vim.fn.split(l, '\\zs')
  local function brk(c) return c ~= nil and #c == 1 and breakat:find(c, 1, true) ~= nil end
  local widths = {}
  for i, c in ipairs(chars) do widths[i] = vim.fn.strdisplaywidth(c) end
  local function cells(i, vcol) return chars[i] == '\t' and ts - vcol % ts or widths[i] end
  local vcol = 0
  for i, c in ipairs(chars) do
    local size = cells(i, vcol)
    if brk(c) and not brk(chars[i + 1]) then
      -- the word after c, with the breakable characters that follow it, up
      -- to where c's row ends (less a tab's width beyond one, as Neovim counts)
      local adj = c == '\t' and size - 1 or 0
      local colmax = width - adj
      if vcol >= colmax then
        local q = (vcol - width) / width
        colmax = width + ((q < 0 and math.ceil(q) or math.floor(q)) + 1) * width - adj
      end
      local col2, j = vcol, i
      while true do
        j = j + 1
        if not (chars[j] and (brk(chars[j]) or col2 == vcol or not brk(chars[j - 1]))) then break end
        col2 = col2 + cells(j, col2)
        if col2 >= colmax then
          size = colmax - vcol + adj
          break
        end
      end
    elseif c ~= '\t' and size > 1 and vcol % width + size > width then
      size = size + width - vcol % width
    end
    vcol = vcol + size
  end
  return math.max(1, math.ceil(vcol / width))
end

--- Screen rows `lines` take in a window `width` columns wide with 'wrap' and
--- 'linebreak' on (the answer float's: words are not cut at the edge); tabs
--- every `tabstop` (8) columns.
function R.wrapped_height(lines, width, tabstop)
  width = math.max(width, 1)
  local breakat, ts = vim.o.breakat, math.max(tabstop or 8, 1)
  local rows = 0
  for _, l in ipairs(lines) do
    if not l:find('\t', 1, true) and vim.fn.strdisplaywidth(l) <= width then
      rows = rows + 1
    else
      rows = rows + linebreak_rows(l, width, breakat, ts)
    end
  end
  return rows
end

--- Float geometry for `lines`: { width, height }, height counting wrapped rows
--- (tabs every `tabstop` columns).
function R.float_size(lines, fc, columns, total_lines, tabstop)
  local width = 20
  for _, l in ipairs(lines) do width = math.max(width, vim.fn.strdisplaywidth(l)) end
  width = math.min(width + 2, fc.max_width, columns - 4)
  local height = math.min(R.wrapped_height(lines, width, tabstop), fc.max_height, math.max(total_lines - 6, 3))
  return { width = width, height = height }
end

--- :CodeRagStatus text for a coderag/status result.
--- What a person reads of an index a pass has not finished (docs/protocol.md,
--- partialIndex), or nil for a whole one.
function R.partial_index_text(p)
  if type(p) ~= 'table' or (tonumber(p.total) or 0) <= 0 then return nil end
  if p.state == 'indexing' then
    local pid = (tonumber(p.pid) or 0) > 0 and string.format(' (process %d)', p.pid) or ''
    return string.format('indexing %d/%d files%s', tonumber(p.indexed) or 0, tonumber(p.total), pid)
  end
  return string.format('partial: %d/%d files indexed, then the pass stopped', tonumber(p.indexed) or 0,
    tonumber(p.total))
end

function R.status_text(s)
  local function one(x)
    if x.state == 'indexing' then
      local total, done = tonumber(x.total) or 0, tonumber(x.indexed) or 0
      if total > 0 then
        local t = string.format('indexing %d/%d files (%d%%)', done, total, math.floor(100 * done / total))
        if (tonumber(x.files) or 0) > 0 then
          t = t .. string.format('; %d files searchable meanwhile', x.files)
        end
        return t
      end
      return 'indexing (scanning files)'
    elseif x.state == 'ready' then
      local partial = R.partial_index_text(x.partialIndex)
      if partial then return partial .. string.format(' (%d files searchable)', tonumber(x.files) or 0) end
      return string.format('ready: %d files, %d chunks', tonumber(x.files) or 0, tonumber(x.chunks) or 0)
    end
    return 'error: ' .. (nonempty(x.message) and x.message or 'unknown')
  end
  local roots = type(s.roots) == 'table' and s.roots or {}
  if #roots <= 1 then
    if roots[1] and s.partialIndex == nil then s = vim.tbl_extend('keep', { partialIndex = roots[1].partialIndex }, s) end
    local t = one(s)
    if roots[1] and nonempty(roots[1].root) then t = t .. ' — ' .. roots[1].root end
    return t
  end
  local parts = {}
  for _, r in ipairs(roots) do table.insert(parts, r.root .. ': ' .. one(r)) end
  return table.concat(parts, '; ')
end

--- Statusline text (plain: a single `%`, for %{} and statusline plugins) for progress `p`.
function R.progress_text(p)
  if not p then return '' end
  local pct = p.percentage and string.format(' %d%%', p.percentage) or ''
  local msg = nonempty(p.message) and (' ' .. p.message) or ''
  local title = (p.title and p.title ~= 'CodeRAG') and (' ' .. p.title) or ''
  return (string.format('CodeRAG%s%s%s', title, pct, msg):gsub('%s+', ' '))
end

return R
