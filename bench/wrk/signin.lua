-- Sign-in with two-step verification: POST /login with a username of BENCH_USERS (one a line,
-- each used once: a TOTP code is accepted once per account and time step), the password
-- BENCH_PASSWORD and the CSRF pair BENCH_CSRF_COOKIE / BENCH_CSRF, must redirect to the second
-- step with a pending sign-in cookie; the thread's next request sends the code BENCH_CODE there,
-- which must redirect away from /login with the session. `ok` counts completed sign-ins.
dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")

local password = os.getenv("BENCH_PASSWORD")
local csrfCookie = os.getenv("BENCH_CSRF_COOKIE")
local csrf = os.getenv("BENCH_CSRF")
local code = os.getenv("BENCH_CODE")
local FORM = "application/x-www-form-urlencoded"
local users = {}
local u = 0
local pendings = fifo()

function init(args)
  users = thread_lines(os.getenv("BENCH_USERS"))
end

function request()
  local pending = pendings.pop()
  if pending then
    return wrk.format("POST", "/login/second-step",
      { ["Content-Type"] = FORM, ["Cookie"] = csrfCookie .. "; " .. pending }, "code=" .. code .. "&_csrf=" .. csrf)
  end
  -- Past the last user the sign-ins are refused (counted unexpected): the file must outlast the run.
  u = u + 1
  local user = users[u] or "nobody"
  return wrk.format("POST", "/login",
    { ["Content-Type"] = FORM, ["Cookie"] = csrfCookie }, "username=" .. user .. "&password=" .. password .. "&_csrf=" .. csrf)
end

function response(status, headers, body)
  local location = headers["location"] or headers["Location"] or ""
  if status == 303 and location == "/login/second-step" then
    local cookie = (headers["set-cookie"] or headers["Set-Cookie"] or ""):match("^([^;]+)")
    if cookie then
      pendings.push(cookie)
      return
    end
  elseif status == 303 and not location:find("/login", 1, true) then
    ok = ok + 1
    return
  end
  tally(false, status, body:match("Too many[^<]*") or body, location)
end
