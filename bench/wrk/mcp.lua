-- POST BENCH_PATH (the MCP server) calling the tool BENCH_TOOL with no arguments, rotating through
-- the tokens of BENCH_TOKENS (`Authorization: Bearer`), as an MCP client that is connected already
-- sends it (protocol 2025-11-25, stateless: no session). An answer counts as expected when it is
-- 200 with the tool's structuredContent.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local path = os.getenv("BENCH_PATH")
local body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. os.getenv("BENCH_TOOL") .. '","arguments":{}}}'
local requests = {}
local i = 0

function init(args)
  for _, token in ipairs(thread_lines(os.getenv("BENCH_TOKENS"))) do
    requests[#requests + 1] = wrk.format("POST", path, {
      ["Authorization"] = "Bearer " .. token,
      ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream",
      ["MCP-Protocol-Version"] = "2025-11-25",
    }, body)
  end
end

function request()
  i = i % #requests + 1
  return requests[i]
end

function response(status, headers, body)
  tally(status == 200 and body:find('"structuredContent"', 1, true) ~= nil, status, body)
end
