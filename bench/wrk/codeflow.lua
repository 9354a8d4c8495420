-- The returning user's code flow: GET BENCH_AUTHORIZE (a signed-in browser, BENCH_COOKIES one
-- Cookie header a line, whose consent is remembered) must answer a redirect carrying a code; the
-- next request from the thread exchanges a waiting code at BENCH_PATH with the PKCE verifier.
-- `ok` counts completed flows (token answers 200); anything else is unexpected.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local authorize = os.getenv("BENCH_AUTHORIZE")
local path = os.getenv("BENCH_PATH")
local exchange = os.getenv("BENCH_EXCHANGE")   -- the form without the code
local auth = os.getenv("BENCH_CLIENT_AUTH")
local headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
if auth and auth ~= "" then headers["Authorization"] = auth end
local cookies = {}
local c = 0
local codes = fifo()

function init(args)
  for _, cookie in ipairs(thread_lines(os.getenv("BENCH_COOKIES"))) do
    cookies[#cookies + 1] = wrk.format("GET", authorize, { ["Cookie"] = cookie })
  end
end

function request()
  local code = codes.pop()
  if code then return wrk.format("POST", path, headers, exchange .. "&code=" .. code) end
  c = c % #cookies + 1
  return cookies[c]
end

function response(status, headers, body)
  if status == 302 or status == 303 then
    local location = headers["location"] or headers["Location"] or ""
    local code = location:match("[?&]code=([^&]+)")
    if code then
      codes.push(code)
    else
      tally(false, status, "", location)
    end
  elseif status == 200 and body:find('"access_token"', 1, true) then
    ok = ok + 1
  else
    tally(false, status, body)
  end
end
