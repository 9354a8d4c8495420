-- A signed-in member's first authorization of an app named by a client ID metadata document: GET
-- BENCH_AUTHORIZE followed by the URL-encoded client_id, with the Cookie headers of BENCH_COOKIES
-- (one a line) in rotation, must answer 200 with the consent form. The client_id is a line of
-- BENCH_CLIENTS in rotation (documents the server keeps) or, with BENCH_CLIENT_PREFIX, that prefix,
-- the thread and a number no earlier request used, then ".json": a document never fetched before.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local authorize = os.getenv("BENCH_AUTHORIZE")
local prefix = os.getenv("BENCH_CLIENT_PREFIX")
local clients = {}
local cookies = {}
local c, n = 0, 0

function init(args)
  cookies = thread_lines(os.getenv("BENCH_COOKIES"))
  if not prefix then
    for _, client in ipairs(thread_lines(os.getenv("BENCH_CLIENTS"))) do clients[#clients + 1] = urlencode(client) end
  end
end

function request()
  n = n + 1
  c = c % #cookies + 1
  local client = prefix and urlencode(prefix .. (id or 1) .. "-" .. n .. ".json") or clients[(n - 1) % #clients + 1]
  return wrk.format("GET", authorize .. client, { ["Cookie"] = cookies[c] })
end

function response(status, headers, body)
  tally(status == 200 and body:find('name="decision" value="approve"', 1, true) ~= nil, status, body, headers["location"] or headers["Location"])
end
