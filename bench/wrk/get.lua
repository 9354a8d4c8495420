-- GET BENCH_PATH rotating through the lines of BENCH_TOKENS: a line `token` is sent as
-- `Authorization: Bearer <token>`; a line `token<TAB>proof` as `Authorization: DPoP <token>` with
-- the proof in `DPoP` (RFC 9449 7.1; a proof is accepted once, so such a file holds a line per
-- request). With BENCH_COOKIES instead, each line of that file is sent as the `Cookie` header (a
-- signed-in browser's page). An answer with status BENCH_EXPECT counts as expected.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local path = os.getenv("BENCH_PATH")
local expect = tonumber(os.getenv("BENCH_EXPECT") or "200")
local requests = {}
local i = 0

local function headers_of_token(line)
  local token, proof = line:match("^([^\t]+)\t(.+)$")
  return token and { ["Authorization"] = "DPoP " .. token, ["DPoP"] = proof } or { ["Authorization"] = "Bearer " .. line }
end

function init(args)
  local cookies = os.getenv("BENCH_COOKIES")
  for _, line in ipairs(thread_lines(cookies or os.getenv("BENCH_TOKENS"))) do
    local headers = cookies and { ["Cookie"] = line } or headers_of_token(line)
    requests[#requests + 1] = wrk.format("GET", path, headers)
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end

function response(status, headers, body)
  tally(status == expect, status, body)
end
