-- The refresh grant in chains: each refresh token in BENCH_TOKENS starts a chain; every answer's
-- new refresh token replaces the one just used (rotation), so no token is ever sent twice.
-- The client authenticates with BENCH_CLIENT_AUTH (an Authorization header value).
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local path = os.getenv("BENCH_PATH")
local auth = os.getenv("BENCH_CLIENT_AUTH")
local headers = { ["Content-Type"] = "application/x-www-form-urlencoded", ["Authorization"] = auth }
local tokens = fifo()

function init(args)
  for _, token in ipairs(thread_lines(os.getenv("BENCH_TOKENS"))) do tokens.push(token) end
end

function request()
  local token = tokens.pop() or "none"
  return wrk.format("POST", path, headers, "grant_type=refresh_token&refresh_token=" .. token)
end

function response(status, headers, body)
  local token = status == 200 and body:match('"refresh_token"%s*:%s*"([^"]+)"')
  if token then tokens.push(token) end
  tally(token ~= nil and token ~= false, status, body)
end
