-- GET BENCH_PATH with `Authorization: Bearer <token>`, rotating through the tokens in
-- BENCH_TOKENS (one a line); an answer with status BENCH_EXPECT counts as expected.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local path = os.getenv("BENCH_PATH")
local expect = tonumber(os.getenv("BENCH_EXPECT") or "200")
local requests = {}
local i = 0

function init(args)
  for _, token in ipairs(thread_lines(os.getenv("BENCH_TOKENS"))) do
    requests[#requests + 1] = wrk.format("GET", path, { ["Authorization"] = "Bearer " .. token })
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end

function response(status, headers, body)
  if status == expect then ok = ok + 1 else unexpected = unexpected + 1 end
end
