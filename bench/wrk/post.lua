-- POST the body BENCH_BODY to BENCH_PATH with Content-Type BENCH_CONTENT_TYPE, the same request
-- every time (a registration: each makes a new app). An answer with status BENCH_EXPECT counts as
-- expected.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local path = os.getenv("BENCH_PATH")
local body = os.getenv("BENCH_BODY")
local contentType = os.getenv("BENCH_CONTENT_TYPE")
local expect = tonumber(os.getenv("BENCH_EXPECT"))
local post

function init(args)
  -- Formatted here, not when the script loads: only then does wrk know the Host header.
  post = wrk.format("POST", path, { ["Content-Type"] = contentType }, body)
end

function request()
  return post
end

function response(status, headers, body)
  tally(status == expect, status, body)
end
