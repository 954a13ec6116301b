-- Headless Neovim 0.11 end-to-end test for the unveil language server.
--
-- Run (tests/editors/test_nvim.py does this with copies of corpus files):
--   UNVEIL_SERVER_CMD='["python","-m","unveil","serve","--stdio"]' UNVEIL_HIDDEN_FILES=/abs/SKILL.md \
--     nvim --headless -n -i NONE -u tests/editors/nvim/test_nvim.lua CLAUDE.md /abs/SKILL.md
--
-- The server is configured the way the README tells Neovim 0.11 users to (vim.lsp.config +
-- vim.lsp.enable + vim.lsp.inlay_hint.enable). For every file on the command line it prints
--   FILE, DIAG (one per diagnostic, or "none"), INLAY (hints from a textDocument/inlayHint
--   request), INLAY(get) (what Neovim shows) and HOVER on the line of the "tok per session" summary
--   hint (the token cost table);
-- for each file listed in UNVEIL_HIDDEN_FILES (comma-separated absolute paths) also
--   HOVER on the first diagnostic, CODEACTION for it, and APPLIED after applying the first
--   code action that carries an edit, with the diagnostics that remain.
-- for each file in UNVEIL_NEIGHBOUR_FILES, HOVERBEFORE and HOVERAFTER with the cursor on the
--   character just before and just after the first HID001 run (a run of tag characters draws
--   nothing, so the cursor can only rest next to it).
-- A missing item prints "FAIL ..."; the exit status is 1 if anything failed, 0 after "OK".
-- Lines in the output are 1-based; columns are Neovim byte columns (0-based).

local function out(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end

local failures = 0
local function fail(msg)
  failures = failures + 1
  out("FAIL " .. msg)
end

local function flat(s, max)
  s = tostring(s or ""):gsub("%s+", " ")
  max = max or 400
  if #s > max then
    s = s:sub(1, max) .. "..."
  end
  return s
end

local ok_cmd, server_cmd = pcall(vim.json.decode, os.getenv("UNVEIL_SERVER_CMD") or "")
if not ok_cmd or type(server_cmd) ~= "table" then
  out("FAIL UNVEIL_SERVER_CMD must be a JSON list, e.g. [\"python\",\"-m\",\"unveil\",\"serve\"]")
  vim.cmd("cquit 2")
end
local neighbour = {}
for _, f in ipairs(vim.split(os.getenv("UNVEIL_NEIGHBOUR_FILES") or "", ",", { trimempty = true })) do
  neighbour[vim.fn.fnamemodify(f, ":p")] = true
end
local hidden = {}
for _, f in ipairs(vim.split(os.getenv("UNVEIL_HIDDEN_FILES") or "", ",", { trimempty = true })) do
  hidden[vim.fn.fnamemodify(f, ":p")] = true
end
local wait_ms = tonumber(os.getenv("UNVEIL_NVIM_WAIT_MS") or "") or 30000

out("nvim " .. tostring(vim.version()))

-- Count publishDiagnostics per file (also empty ones) before Neovim's own handler runs.
local published = {}
local on_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  if result and result.uri then
    local name = vim.uri_to_fname(result.uri)
    published[name] = (published[name] or 0) + 1
  end
  return on_publish(err, result, ctx, config)
end

-- The README's configuration.
vim.cmd("filetype on")
vim.filetype.add({
  extension = { mdc = "markdown" },
  filename = { [".cursorrules"] = "markdown", [".windsurfrules"] = "markdown", [".clinerules"] = "markdown" },
})
vim.lsp.config("unveil", {
  cmd = server_cmd,
  filetypes = { "markdown" },
  root_markers = { "AGENTS.md", "CLAUDE.md", ".git" },
})
vim.lsp.enable("unveil")
vim.lsp.inlay_hint.enable(true)

local function markup_text(contents)
  if type(contents) == "string" then
    return contents
  end
  if type(contents) ~= "table" then
    return ""
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    parts[#parts + 1] = markup_text(c)
  end
  return table.concat(parts, "\n")
end

local function request(client, buf, method, params)
  local resp, err = client:request_sync(method, params, 10000, buf)
  if not resp then
    return nil, tostring(err)
  end
  if resp.err then
    return nil, flat(vim.inspect(resp.err), 200)
  end
  return resp.result
end

local function hover_at(client, buf, tag, lnum, col)
  vim.api.nvim_win_set_cursor(0, { lnum + 1, col })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local result, err = request(client, buf, "textDocument/hover", params)
  local text = result and markup_text(result.contents) or ""
  if text == "" then
    fail(string.format("%s: no hover at %d:%d (%s)", tag, lnum + 1, col, err or "empty"))
    return nil
  end
  out(string.format("HOVER %s %d:%d %s", tag, lnum + 1, col, flat(text)))
  return text
end

local function print_diags(buf, tag, prefix)
  local diags = vim.diagnostic.get(buf)
  table.sort(diags, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    return a.col < b.col
  end)
  for _, d in ipairs(diags) do
    out(string.format(
      "%s %s %d:%d-%d:%d sev=%d code=%s source=%s msg=%s",
      prefix, tag, d.lnum + 1, d.col, (d.end_lnum or d.lnum) + 1, d.end_col or d.col, d.severity,
      tostring(d.code), tostring(d.source), flat(d.message, 300)
    ))
  end
  if #diags == 0 then
    out(prefix .. " " .. tag .. " none")
  end
  return diags
end

local function inlay_hints(client, buf, tag)
  local uri = vim.uri_from_bufnr(buf)
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = vim.api.nvim_buf_line_count(buf), character = 0 } },
  }
  -- Token counts need the tokenizer, which the server loads lazily: poll until a hint has one.
  local hints
  vim.wait(wait_ms, function()
    hints = request(client, buf, "textDocument/inlayHint", params)
    if type(hints) ~= "table" then
      return false
    end
    for _, h in ipairs(hints) do
      local label = type(h.label) == "string" and h.label or markup_text(h.label)
      if label:find("tok") and label:find("%d") then
        return true
      end
    end
    return false
  end, 250)
  local summary_line
  if type(hints) ~= "table" or #hints == 0 then
    fail(tag .. ": no inlay hints")
  else
    for _, h in ipairs(hints) do
      local label = h.label
      if type(label) == "table" then
        local parts = {}
        for _, p in ipairs(label) do
          parts[#parts + 1] = p.value or ""
        end
        label = table.concat(parts)
      end
      out(string.format("INLAY %s %d:%d %s", tag, h.position.line + 1, h.position.character, flat(label, 200)))
      if not summary_line and label:gsub("\194\160", " "):find("tok per session", 1, true) then
        summary_line = h.position.line
      end
    end
  end
  -- What Neovim itself fetched for display (vim.lsp.inlay_hint.enable above).
  -- Neovim 0.11.4 sends no inlayHint request for the buffer whose didOpen goes out during
  -- client initialisation (the client is not yet attached when LspNotify fires); it asks on
  -- the next edit or workspace/inlayHint/refresh. Re-enabling for the buffer (what many
  -- LspAttach configs do) makes it ask now.
  local shown = {}
  local function got()
    shown = vim.lsp.inlay_hint.get({ bufnr = buf })
    return #shown > 0
  end
  if not vim.wait(math.min(wait_ms, 3000), got, 50) then
    out("NOTE " .. tag .. ": Neovim has not requested inlay hints yet; vim.lsp.inlay_hint.enable(true, {bufnr})")
    vim.lsp.inlay_hint.enable(true, { bufnr = buf })
    vim.wait(wait_ms, got, 50)
  end
  if #shown == 0 then
    fail(tag .. ": Neovim shows no inlay hints (vim.lsp.inlay_hint.get is empty)")
  else
    local h = shown[1].inlay_hint
    local label = type(h.label) == "string" and h.label or markup_text(h.label)
    out(string.format("INLAY(get) %s n=%d first=%d:%d %s", tag, #shown, h.position.line + 1, h.position.character, flat(label, 200)))
  end
  return summary_line
end

local function code_actions(client, buf, tag, d)
  local lsp_diag = d.user_data and d.user_data.lsp
  if not lsp_diag then
    fail(tag .. ": diagnostic has no LSP data")
    return
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = lsp_diag.range,
    context = { diagnostics = { lsp_diag }, triggerKind = 1 },
  }
  local actions, err = request(client, buf, "textDocument/codeAction", params)
  if type(actions) ~= "table" or #actions == 0 then
    fail(string.format("%s: no code action for %s (%s)", tag, tostring(d.code), err or "empty"))
    return
  end
  local chosen
  for _, a in ipairs(actions) do
    out(string.format("CODEACTION %s %d:%d code=%s kind=%s title=%s", tag, d.lnum + 1, d.col, tostring(d.code), tostring(a.kind), flat(a.title, 200)))
    if not a.edit and a.data and not a.command then
      a = request(client, buf, "codeAction/resolve", a) or a
    end
    if a.edit and not chosen then
      chosen = a
    end
  end
  if not chosen then
    fail(tag .. ": no code action carries an edit")
    return
  end
  local before = published[vim.api.nvim_buf_get_name(buf)] or 0
  local n_before = #vim.diagnostic.get(buf)
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
  if not vim.wait(wait_ms, function()
    return (published[vim.api.nvim_buf_get_name(buf)] or 0) > before
  end, 20) then
    fail(tag .. ": no diagnostics after applying " .. chosen.title)
    return
  end
  local remaining = {}
  for _, x in ipairs(vim.diagnostic.get(buf)) do
    remaining[#remaining + 1] = string.format("%s@%d", tostring(x.code), x.lnum + 1)
  end
  table.sort(remaining)
  out(string.format(
    "APPLIED %s title=%s diags %d -> %d remaining=[%s]",
    tag, flat(chosen.title, 200), n_before, #remaining, table.concat(remaining, ",")
  ))
end

local function check_file(path, first)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  local tag = vim.fn.fnamemodify(name, ":t")
  out(string.format("FILE %s ft=%s lines=%d", tag, vim.bo[buf].filetype, vim.api.nvim_buf_line_count(buf)))
  local client
  vim.wait(wait_ms, function()
    client = vim.lsp.get_clients({ bufnr = buf, name = "unveil" })[1]
    return client ~= nil and client.initialized
  end, 20)
  if not client then
    fail(tag .. ": unveil did not attach")
    return
  end
  if first then
    local info = client.server_info or {}
    out(string.format("CLIENT server=%s %s encoding=%s", tostring(info.name), tostring(info.version), client.offset_encoding))
  end
  if not vim.wait(wait_ms, function()
    return (published[name] or 0) > 0
  end, 20) then
    fail(tag .. ": no publishDiagnostics")
    return
  end
  local diags = print_diags(buf, tag, "DIAG")
  -- The file's token summary: an inlay hint on the first line (or the closing frontmatter
  -- fence), and the cost table when hovering that line.
  local summary_line = inlay_hints(client, buf, tag)
  if summary_line then
    hover_at(client, buf, tag, summary_line, 0)
  else
    fail(tag .. ": no 'tok per session' summary inlay hint")
  end
  if hidden[name] then
    if #diags == 0 then
      fail(tag .. ": expected hidden-content diagnostics")
      return
    end
    local d = diags[1]
    for _, x in ipairs(diags) do
      if x.severity == vim.diagnostic.severity.ERROR then
        d = x
        break
      end
    end
    hover_at(client, buf, tag, d.lnum, d.col)
    code_actions(client, buf, tag, d)
  end
  if neighbour[name] then
    for _, x in ipairs(diags) do
      if x.code == "HID001" then
        for _, spot in ipairs({ { "HOVERBEFORE", x.col - 1 }, { "HOVERAFTER", x.end_col } }) do
          local text = hover_at(client, buf, tag, x.lnum, spot[2])
          if text then
            out(string.format("%s %s %d:%d %s", spot[1], tag, x.lnum + 1, spot[2], flat(text)))
          end
        end
        break
      end
    end
  end
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(function()
        for i, f in ipairs(vim.fn.argv()) do
          check_file(vim.fn.fnamemodify(f, ":p"), i == 1)
        end
      end)
      if not ok then
        fail("error: " .. tostring(err))
      end
      if failures > 0 then
        out(string.format("FAILED %d", failures))
        vim.cmd("cquit 1")
      else
        out("OK")
        vim.cmd("qall!")
      end
    end)
  end,
})
