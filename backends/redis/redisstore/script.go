package redisstore

import "github.com/redis/go-redis/v9"

// Every script names one real key in KEYS (for a cluster client's routing)
// and builds the others from the base in ARGV: they all share the store's
// hash tag, hence its slot.

// headersScript returns the ids and headers of the rows in lexicographic
// ranges of the row set: ARGV = base, then min/max pairs; the reply is a
// flat list id, header, id, header…, read atomically.
var headersScript = redis.NewScript(`
local base = ARGV[1]
local out = {}
for i = 2, #ARGV, 2 do
  local ids = redis.call('ZRANGEBYLEX', base .. 'k', ARGV[i], ARGV[i+1])
  if #ids > 0 then
    for j = 1, #ids, 4000 do
      local chunk = {}
      for n = j, math.min(j + 3999, #ids) do chunk[#chunk+1] = ids[n] end
      local ms = redis.call('HMGET', base .. 'm', unpack(chunk))
      for n = 1, #chunk do
        out[#out+1] = chunk[n]
        out[#out+1] = ms[n] or ''
      end
    end
  end
end
return out
`)

// rowsScript reads fields of item hashes atomically: ARGV = base, number
// of fields, the fields, then row ids; the reply has one list per id.
var rowsScript = redis.NewScript(`
local base = ARGV[1]
local nf = tonumber(ARGV[2])
local fields = {}
for i = 3, 2 + nf do fields[#fields+1] = ARGV[i] end
local out = {}
for i = 3 + nf, #ARGV do
  out[#out+1] = redis.call('HMGET', base .. 'r:' .. ARGV[i], unpack(fields))
end
return out
`)

// commitScript applies a write transaction's changes, in order, when the
// lock still holds its token, and releases the lock: all or nothing,
// since nothing it runs can fail on a valid store (a vector set of other
// dimensions is left alone, not written), and every check comes before
// its first write (a server out of memory refuses a script at its first
// write only). KEYS[1] is the lock; ARGV = base, token, the index part,
// then the changes:
//
//	P id value created updated expires ttl reindex vectors count expScore codes fines hash {blob attrs}*count
//	D id
//	X min max min max    (delete the rows in two lexicographic ranges)
//	R id expires expScore
//
// (expScore "" when expires is 0; codes "" for none). The index part
// (index.go) is "" (no row changes), "L" (rows change in a store without
// index: the generation moves on, the codes fall behind it), or "I",
// the new generation, full ("1": every item may have changed), recode
// ("1": the lock is kept for a recode that follows), the number of
// logged row ids and the ids. The coverage of the items with codes is
// kept from each row's hash ("hi:lo", two 32-bit halves of a 64-bit
// wrapping sum, as Lua numbers are doubles). The script leaves a marker
// {P}:done:<token> for 10 minutes, and a run that finds it changes
// nothing and succeeds: go-redis sends a command again when its reply
// does not come within the client's ReadTimeout (a large commit on a
// loaded server), and that second run would otherwise find the lock
// released by the first and report ErrLeaseLost for a committed
// transaction.
var commitScript = redis.NewScript(`
local base = ARGV[1]
local done = base .. 'done:' .. ARGV[2]
if redis.call('EXISTS', done) == 1 then return 1 end
if redis.call('GET', KEYS[1]) ~= ARGV[2] then
  return redis.error_reply('LEASELOST the store lock is no longer held by this transaction')
end
local ix = base .. 'ix'
local mode = ARGV[3]
local i = 4
local gen, full, recode, logs = nil, '0', '0', {}
if mode == 'I' then
  gen, full, recode = ARGV[4], ARGV[5], ARGV[6]
  local nlog = tonumber(ARGV[7])
  for j = 1, nlog do logs[j] = ARGV[7 + j] end
  i = 8 + nlog
end
local hasix = redis.call('EXISTS', ix) == 1
local prev, known = nil, nil
if hasix then
  prev = redis.call('HMGET', ix, 'gen', 'cgen', 'floor', 'items', 'shi', 'slo')
elseif mode == 'I' then
  if redis.call('ZCARD', base .. 'k') == 0 then
    prev, known = {'0', '0', '0', '0', '0', '0'}, '1'
  else
    prev, known = {'1', '0', '0', '0', '0', '0'}, '0' -- rows of a build before codes
  end
end
if mode == 'I' and tonumber(prev[1]) + 1 ~= tonumber(gen) then
  return redis.error_reply('ERR index generation ' .. prev[1] .. ' is not ' .. gen .. ' - 1')
end
local vs = base .. 'vs'
local vdim = nil
if redis.call('EXISTS', vs) == 1 then vdim = tonumber(redis.call('VDIM', vs)) end
local TWO32 = 4294967296
local items, hi, lo = 0, 0, 0
if prev then items, hi, lo = tonumber(prev[4] or '0'), tonumber(prev[5] or '0'), tonumber(prev[6] or '0') end
local function cov(h, sign)
  if not prev or not h or h == '' then return end
  local a, b = string.match(h, '^(%d+):(%d+)$')
  if not a then return end
  a, b = tonumber(a), tonumber(b)
  items = items + sign
  lo = lo + sign * b
  if lo >= TWO32 then lo = lo - TWO32; hi = hi + 1 end
  if lo < 0 then lo = lo + TWO32; hi = hi - 1 end
  hi = (hi + sign * a) % TWO32
end
local snapdrop = false
-- uncode drops a row's vector set elements and counts its codes out; it
-- reports whether the row had codes.
local function uncode(id, hk)
  local old = redis.call('HMGET', hk, 'n', 'h')
  local n = tonumber(old[1] or '0')
  if vdim then
    for j = 0, n - 1 do redis.call('VREM', vs, id .. '\0' .. j) end
  end
  if old[2] then cov(old[2], -1) end
  return old[2] ~= false and old[2] ~= nil
end
local function del(id)
  local hk = base .. 'r:' .. id
  if uncode(id, hk) then snapdrop = true end
  redis.call('DEL', hk)
  redis.call('HDEL', base .. 'm', id)
  redis.call('ZREM', base .. 'k', id)
  redis.call('ZREM', base .. 'x', id)
end
local function expiry(id, e, es)
  if e == '0' then redis.call('ZREM', base .. 'x', id) else redis.call('ZADD', base .. 'x', es, id) end
end
while i <= #ARGV do
  local op = ARGV[i]
  if op == 'P' then
    local id, value, c, u, e, t, reindex, x, n = ARGV[i+1], ARGV[i+2], ARGV[i+3], ARGV[i+4], ARGV[i+5], ARGV[i+6], ARGV[i+7], ARGV[i+8], tonumber(ARGV[i+9])
    local es, q, f, h = ARGV[i+10], ARGV[i+11], ARGV[i+12], ARGV[i+13]
    i = i + 14
    local hk = base .. 'r:' .. id
    local hv = '0'
    if reindex == '1' then
      uncode(id, hk)
      redis.call('HDEL', hk, 'x', 'n', 'q', 'f', 'h')
      if n > 0 then
        redis.call('HSET', hk, 'x', x, 'n', n)
        hv = '1'
      end
      if q ~= '' then
        redis.call('HSET', hk, 'q', q, 'f', f, 'h', h)
        cov(h, 1)
      end
      for j = 0, n - 1 do
        local blob, attrs = ARGV[i], ARGV[i+1]
        i = i + 2
        if blob ~= '' and (vdim == nil or vdim * 4 == #blob) then
          redis.call('VADD', vs, 'FP32', blob, id .. '\0' .. j, 'SETATTR', attrs)
          vdim = #blob / 4
        end
      end
    elseif redis.call('HEXISTS', hk, 'x') == 1 then
      hv = '1'
    end
    redis.call('HSET', hk, 'v', value, 'c', c, 'u', u, 'e', e, 't', t)
    redis.call('ZADD', base .. 'k', 0, id)
    redis.call('HSET', base .. 'm', id, u .. ' ' .. e .. ' ' .. hv)
    expiry(id, e, es)
  elseif op == 'D' then
    del(ARGV[i+1])
    i = i + 2
  elseif op == 'X' then
    for r = 0, 1 do
      local ids = redis.call('ZRANGEBYLEX', base .. 'k', ARGV[i+1+2*r], ARGV[i+2+2*r])
      for _, id in ipairs(ids) do del(id) end
    end
    i = i + 5
  elseif op == 'R' then
    local id, e, es = ARGV[i+1], ARGV[i+2], ARGV[i+3]
    i = i + 4
    local hk = base .. 'r:' .. id
    local u = redis.call('HGET', hk, 'u')
    if u then
      redis.call('HSET', hk, 'e', e)
      local hv = '0'
      if redis.call('HEXISTS', hk, 'x') == 1 then hv = '1' end
      redis.call('HSET', base .. 'm', id, u .. ' ' .. e .. ' ' .. hv)
      expiry(id, e, es)
    end
  else
    return redis.error_reply('ERR unknown change ' .. op)
  end
end
local function num(x) return string.format('%.0f', x) end
if mode == 'I' then
  local g = tonumber(gen)
  local fields = {'gen', gen}
  if not hasix then
    for _, v in ipairs({'floor', '0', 'full', '0', 'sgen', '-1', 'ssize', '0', 'known', known}) do fields[#fields+1] = v end
  end
  if recode ~= '1' and prev[2] == prev[1] then
    fields[#fields+1] = 'cgen'; fields[#fields+1] = gen
  elseif not hasix then
    fields[#fields+1] = 'cgen'; fields[#fields+1] = prev[2]
  end
  if full == '1' then
    fields[#fields+1] = 'full'; fields[#fields+1] = gen
  else
    for _, id in ipairs(logs) do redis.call('ZADD', base .. 'ixl', g, id) end
  end
  if g % 64 == 0 and g > 512 then
    local floor = math.max(tonumber(prev[3]), g - 512)
    redis.call('ZREMRANGEBYSCORE', base .. 'ixl', '-inf', floor)
    fields[#fields+1] = 'floor'; fields[#fields+1] = num(floor)
  end
  redis.call('HSET', ix, unpack(fields))
elseif mode == 'L' and hasix then
  redis.call('HINCRBY', ix, 'gen', 1)
end
if prev then
  redis.call('HSET', ix, 'items', num(items), 'shi', num(hi), 'slo', num(lo))
  if snapdrop then
    redis.call('DEL', base .. 'ixs')
    redis.call('HSET', ix, 'sgen', '-1', 'ssize', '0')
  end
end
redis.call('SET', done, '1', 'PX', 600000)
if recode ~= '1' then redis.call('DEL', KEYS[1]) end
return 1
`)

// unlockScript releases the lock when it holds the token.
var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// renewScript extends the lock's lease when it holds the token: a lock
// taken over by another holder is never extended.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)
