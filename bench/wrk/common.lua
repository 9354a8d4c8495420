-- Shared by every scenario script: per-thread counters of expected and unexpected answers, and
-- one machine-readable line at the end (`BENCH_JSON {...}`) that bench/run.ts parses.
local threads = {}
local nthreads = 0

function setup(thread)
  nthreads = nthreads + 1
  thread:set("id", nthreads)
  table.insert(threads, thread)
end

ok = 0
unexpected = 0

local debug = os.getenv("BENCH_DEBUG")

-- Counts an answer as expected or not; with BENCH_DEBUG the first three unexpected ones are
-- printed, with `detail` (a Location, say) before the start of their body.
function tally(expected, status, body, detail)
  if expected then
    ok = ok + 1
    return
  end
  unexpected = unexpected + 1
  if debug and unexpected <= 3 then io.write("unexpected ", status, " ", detail and (detail .. " ") or "", body:sub(1, 300), "\n") end
end

-- Lines of a file, only those of this thread (line n goes to thread ((n-1) % threads) + 1).
function thread_lines(path)
  local total = tonumber(os.getenv("BENCH_THREADS") or "1")
  local mine, n = {}, 0
  for line in io.lines(path) do
    if line ~= "" then
      n = n + 1
      if (n - 1) % total == (id or 1) - 1 then mine[#mine + 1] = line end
    end
  end
  return mine
end

function done(summary, latency, requests)
  local good, bad = 0, 0
  for _, t in ipairs(threads) do
    good = good + (t:get("ok") or 0)
    bad = bad + (t:get("unexpected") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"ok":%d,"unexpected":%d,"p50Us":%d,"p99Us":%d,"socketErrors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, good, bad, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write, e.timeout))
end

-- A value as a query parameter carries it (RFC 3986 2.3: only unreserved characters left as they are).
function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(ch) return string.format("%%%02X", string.byte(ch)) end))
end

-- A first-in first-out queue: a thread's follow-up requests (codes to exchange, request_uris to
-- open, second steps to send, refresh tokens to use), each sent once.
function fifo()
  local q = { first = 1, last = 0 }
  function q.push(value)
    q.last = q.last + 1
    q[q.last] = value
  end
  function q.pop()
    if q.first > q.last then return nil end
    local value = q[q.first]
    q[q.first] = nil
    q.first = q.first + 1
    return value
  end
  return q
end
