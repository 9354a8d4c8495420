-- Pushed authorization (RFC 9126) and the returning user's authorization: POST BENCH_PATH with
-- the form BENCH_PAR_BODY must answer 201 with a request_uri; the thread's next request opens
-- BENCH_AUTHORIZE followed by that request_uri (URL-encoded) as a signed-in browser (BENCH_COOKIES,
-- one Cookie header a line, whose consent is remembered), which must redirect with a code.
-- `ok` counts completed flows (the redirect with a code); anything else is unexpected.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local path = os.getenv("BENCH_PATH")
local body = os.getenv("BENCH_PAR_BODY")
local authorize = os.getenv("BENCH_AUTHORIZE")
local push
local cookies = {}
local c = 0
local uris = fifo()

function init(args)
  -- Formatted here, not when the script loads: only then does wrk know the Host header.
  push = wrk.format("POST", path, { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
  cookies = thread_lines(os.getenv("BENCH_COOKIES"))
end

function request()
  local uri = uris.pop()
  if uri then
    c = c % #cookies + 1
    return wrk.format("GET", authorize .. urlencode(uri), { ["Cookie"] = cookies[c] })
  end
  return push
end

function response(status, headers, body)
  if status == 201 then
    local uri = body:match('"request_uri"%s*:%s*"([^"]+)"')
    if uri then
      uris.push(uri)
      return
    end
  elseif status == 302 or status == 303 then
    local location = headers["location"] or headers["Location"] or ""
    if location:match("[?&]code=") then
      ok = ok + 1
      return
    end
  end
  tally(false, status, body, location)
end
