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
// dimensions is left alone, not written). KEYS[1] is the lock; ARGV = base,
// token, then the changes:
//
//	P id value created updated expires ttl reindex vectors count {blob attrs}*count
//	D id
//	X min max min max    (delete the rows in two lexicographic ranges)
//	R id expires expScore
//
// (expScore "" when expires is 0).
var commitScript = redis.NewScript(`
local base = ARGV[1]
if redis.call('GET', KEYS[1]) ~= ARGV[2] then
  return redis.error_reply('LEASELOST the store lock is no longer held by this transaction')
end
local vs = base .. 'vs'
local vdim = nil
if redis.call('EXISTS', vs) == 1 then vdim = tonumber(redis.call('VDIM', vs)) end
local function unindex(id, hk)
  local n = tonumber(redis.call('HGET', hk, 'n') or '0')
  for i = 0, n - 1 do
    if vdim then redis.call('VREM', vs, id .. '\0' .. i) end
  end
end
local function del(id)
  local hk = base .. 'r:' .. id
  unindex(id, hk)
  redis.call('DEL', hk)
  redis.call('HDEL', base .. 'm', id)
  redis.call('ZREM', base .. 'k', id)
  redis.call('ZREM', base .. 'x', id)
end
local function expiry(id, e, es)
  if e == '0' then redis.call('ZREM', base .. 'x', id) else redis.call('ZADD', base .. 'x', es, id) end
end
local i = 3
while i <= #ARGV do
  local op = ARGV[i]
  if op == 'P' then
    local id, value, c, u, e, t, reindex, x, n = ARGV[i+1], ARGV[i+2], ARGV[i+3], ARGV[i+4], ARGV[i+5], ARGV[i+6], ARGV[i+7], ARGV[i+8], tonumber(ARGV[i+9])
    local es = ARGV[i+10]
    i = i + 11
    local hk = base .. 'r:' .. id
    local hv = '0'
    if reindex == '1' then
      unindex(id, hk)
      redis.call('HDEL', hk, 'x', 'n')
      if n > 0 then
        redis.call('HSET', hk, 'x', x, 'n', n)
        hv = '1'
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
redis.call('DEL', KEYS[1])
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
