-- The workspace root rule, the same in every coderag client:
--   1. the nearest folder above the file holding a VCS marker (.git, .hg, .svn, .jj);
--   2. else the nearest folder holding a project marker of a language the server reads
--      (pyproject.toml, go.mod, Cargo.toml, package.json, ...: `coderag root --markers`);
--   3. else the folder the editor was opened in (the working directory at start-up), when the
--      file lies inside it; a file outside it gets its own folder, and the caller says so.
-- A `.coderag/` index folder is never a marker.
local R = {}

local uv = vim.uv or vim.loop

R.vcs_markers = { '.git', '.hg', '.svn', '.jj' }
-- the server's markers, in its order: `coderag root --markers` (tests/cli/root_markers.sh checks)
R.project_markers = {
  'pyproject.toml', 'setup.py', 'setup.cfg', 'configure.ac', 'compile_commands.json', '.clangd',
  'go.mod', 'go.work', 'Cargo.toml', 'pom.xml', 'build.gradle', 'build.gradle.kts',
  'settings.gradle', 'settings.gradle.kts', 'package.json', 'deno.json', 'tsconfig.json',
}

local function dirname(p) return vim.fn.fnamemodify(p, ':h') end

local function normalize(dir)
  dir = vim.fn.fnamemodify(dir, ':p')
  if #dir > 1 then dir = dir:gsub('/+$', '') end
  return dir
end

-- The nearest folder from `dir` upwards that holds one of `markers`.
local function nearest(dir, markers)
  while dir and dir ~= '' do
    for _, m in ipairs(markers) do
      if uv.fs_stat(dir .. '/' .. m) then return dir end
    end
    local parent = dirname(dir)
    if parent == dir then return nil end
    dir = parent
  end
end

local function inside(path, dir)
  return path == dir or path:sub(1, #dir + 1) == (dir == '/' and '/' or dir .. '/')
end

--- Root for `fname` (absolute, or '' for a buffer without a file) given the
--- folder the editor was opened in. Returns root, how ('vcs'|'project'|'opened'|'file').
function R.find(fname, opened, opts)
  opts = opts or {}
  opened = normalize(opened or vim.fn.getcwd())
  if not fname or fname == '' then return opened, 'opened' end
  local start = dirname(normalize(fname))
  local r = nearest(start, opts.vcs_markers or R.vcs_markers)
  if r then return r, 'vcs' end
  r = nearest(start, opts.project_markers or R.project_markers)
  if r then return r, 'project' end
  if inside(start, opened) then return opened, 'opened' end
  return start, 'file'
end

return R
