// Package redisstore is an [gate.Store] on Redis
// (github.com/redis/go-redis/v9), for gates that run in several server
// instances and must share the workflow state of their sessions.
//
// # Usage
//
//	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	gate, err := mcpbind.New(engine, &mcpbind.Options{
//		Store: redisstore.New(client, &redisstore.Options{TTL: 24 * time.Hour}),
//	})
//
// It needs Redis 5 or newer (scripts that call TIME before writing).
// Any [redis.UniversalClient] works: a single node, Sentinel (failover) or
// Cluster. Every operation touches one Redis key, so the store is
// cluster-safe without hash tags. The caller owns the client and closes it.
//
// # Layout
//
// A record is a Redis hash under Options.Prefix + key with two fields
// (more for a split record, below): "v", the version (decimal), and "d",
// the data. The whole hash expires after
// Options.TTL without use: every write, and every load of a record, sets
// the expiry again (a load is one small script: HMGET, then PEXPIRE if the
// record has data). A session's gated calls all load its record, so a
// workflow expires only after it went unused for the TTL; the gate then
// refuses its calls (mcpbind.CodeWorkflowExpired, or
// mcpbind.CodeUnknownWorkflow for a handle) rather than starting it
// again. Choose a TTL longer than the longest pause of a live session.
//
// A record the gate writes through [Store.CompareAndSwapSplit] (what
// package internal/histrec describes) once it takes more than 3 KiB is
// split within its hash: "d" holds its head, and its run history is kept
// an entry a field, "h0", "h1", ..., from the index in "f" to the one
// before "n", and "s" holds the version that wrote them. A call that
// appends an entry then sends and writes the head and that entry and
// removes the oldest, instead of the whole history (tens of kilobytes:
// chartgate serve keeps 500 entries); Load's script joins them back. The
// record is still one key. Load joins the entries only if "s" is the
// record's version: a process of an earlier chartgate, which knows
// nothing of them, writes "v" and "d" alone, and its record is loaded as
// it wrote it.
//
// # Compare-and-swap
//
// [Store.CompareAndSwap] is one Lua script (run with EVALSHA, falling back
// to EVAL when the server does not have it cached, by go-redis'
// [redis.Script]): it reads the current version, compares it with the
// expected one, and only if they are equal writes the data, the new version
// and the expiry. Redis runs a script atomically, so two gate instances
// that race in one workflow cannot both win: the loser gets an error that
// matches [gate.ErrConflict], and the gate reloads and applies its event
// again. (Redis replication is asynchronous: a failover may still lose the
// last writes the old master acknowledged, as for any data in Redis.)
//
// # Versions
//
// [gate.Store] requires that a version is never reused for a key, even
// after the record was deleted or expired. A per-key counter that outlives
// the record would have to live forever (one key per session ever seen), and
// a store-wide counter would be a second key in the script, which Redis
// Cluster refuses unless it is in the same slot. So versions are derived
// from the clock of the Redis server: a write's version is
//
//	max(current version + 1, server time in microseconds since 1970)
//
// taken inside the script (Redis TIME), where the current version may be a
// tombstone's (see below). Versions of a key therefore always
// increase while its hash exists, and a key created again after its record
// expired starts above every version it had before (the previous versions
// are at most the time of its last write, plus the writes that came faster
// than one per microsecond), as long as the server's clock does not go back
// by more than the TTL.
//
// [Store.Delete] removes only the data field and leaves the version as a
// tombstone that expires with the record's remaining TTL, so that a record
// created again soon after a delete continues from the old version even if
// the clock went back or writes came faster than one per microsecond. A
// tombstone is a record with no data: Load reports it as missing (version
// 0) and CompareAndSwap treats it as missing (old version 0 creates).
//
// Versions stay below 2^53, so that the Lua script (whose numbers are
// doubles) computes them exactly: that is the year 2255.
//
// # Change feed
//
// The compare-and-swap script also publishes each write, "VERSION KEY",
// on the pub/sub channel Options.Prefix + "mcpbind:changes" (PUBLISH
// names no key, so this holds on a Cluster too). [Store.Watch] subscribes
// to it while the store has watchers, so a gate attached to a server
// tells its sessions of the transitions made by other instances (see
// "Several instances" in mcpbind's documentation). Redis keeps no
// message: what is published while a subscriber's connection is down is
// missed, and the sessions learn of it at their next request. Deletes are
// not published.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/redis/go-redis/v9"
)

// DefaultTTL is the expiry of a record when Options.TTL is zero.
const DefaultTTL = 24 * time.Hour

// Options configures [New]. The zero value (or nil) means the defaults.
type Options struct {
	// TTL is how long a record lives after it was last loaded or written
	// (a tombstone keeps the expiry it had when its record was deleted).
	// Default [DefaultTTL]. It is rounded up to whole milliseconds.
	TTL time.Duration
	// Prefix starts the Redis key of every record: the Redis key is
	// Prefix + the gate's key. The gate's keys already start with
	// mcpbind.Options.KeyPrefix ("mcpbind:<machine id>:" by default);
	// Prefix separates, for example, several applications on one Redis.
	// Default "".
	Prefix string
}

// Store is an [gate.Store] on Redis. It is safe for concurrent use; the
// zero value is not usable: call [New].
type Store struct {
	client redis.UniversalClient
	ttl    time.Duration
	ttlMS  string // ttl in milliseconds, as the script's argument
	prefix string
	feed   *gate.Feed // the writes, from the channel Prefix + "mcpbind:changes"

	splitAbove int // see SplitAbove
}

var (
	_ gate.Store       = (*Store)(nil)
	_ gate.Lister      = (*Store)(nil)
	_ gate.Watcher     = (*Store)(nil)
	_ gate.FuncWatcher = (*Store)(nil)
	_ histrec.Store    = (*Store)(nil)
)

// New returns a store on client. opts may be nil.
func New(client redis.UniversalClient, opts *Options) *Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	ms := (o.TTL + time.Millisecond - 1) / time.Millisecond
	s := &Store{
		client: client,
		ttl:    ms * time.Millisecond,
		ttlMS:  strconv.FormatInt(int64(ms), 10),
		prefix: o.Prefix,
		// A record's hash is rewritten whole by HSET of "d": from a few
		// KiB on, its history is sent and written again for nothing.
		splitAbove: 3 << 10,
	}
	s.feed = gate.NewFeed(s.listen)
	return s
}

// TTL returns the expiry of records, after rounding.
func (s *Store) TTL() time.Duration { return s.ttl }

// Key returns the Redis key of a record.
func (s *Store) Key(key string) string { return s.prefix + key }

// Field names of a record's hash.
const (
	fieldVersion = "v"
	fieldData    = "d"
)

// entriesLua defines the Lua functions on a split record's entries
// (KEYS[1]'s fields "h" .. i, i from f to n-1): field, the name of
// entry i; drop, which removes entries a to b-1; and read, which
// returns entries a to b-1 joined by commas. They take the fields a
// thousand at a time (a call's arguments are bounded).
const entriesLua = `
local function field(i)
	return "h" .. string.format("%.0f", i)
end
local function chunks(a, b, fn)
	local names = {}
	for i = a, b - 1 do
		names[#names + 1] = field(i)
		if #names == 1000 or i == b - 1 then
			fn(names)
			names = {}
		end
	end
end
local function drop(a, b)
	chunks(a, b, function(names) redis.call("HDEL", KEYS[1], unpack(names)) end)
end
local function read(a, b)
	local parts = {}
	chunks(a, b, function(names)
		for _, e in ipairs(redis.call("HMGET", KEYS[1], unpack(names))) do
			parts[#parts + 1] = e
		end
	end)
	return table.concat(parts, ",")
end
`

// casPrelude begins the scripts that write a record: it reads the
// record's version and entry range (f, n: nil if it has no entries; r[4]
// the version that wrote them),
// compares the version with the expected one (returning {0, current
// version} if they differ), and sets vs to the new version. Versions are
// compared as strings, exactly as stored; the new one is formatted with
// %.0f, since Lua would print a number of 16 digits in exponent form.
//
//	KEYS[1]  the record's key
//	ARGV[1]  the expected version, decimal ("0": no record)
const casPrelude = entriesLua + `
local r = redis.call("HMGET", KEYS[1], "v", "f", "n", "s")
local cur = "0"
if redis.call("HEXISTS", KEYS[1], "d") == 1 then
	cur = r[1] or "?"
end
if cur ~= ARGV[1] then
	return {0, cur}
end
local f, n = tonumber(r[2]), tonumber(r[3])
local prev = tonumber(r[1] or "0") or 0
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local v = prev + 1
if now > v then
	v = now
end
local vs = string.format("%.0f", v)
`

// casEpilogue ends the scripts that write a record: it writes the new
// version and the data, sets the expiry, and publishes the change.
//
//	ARGV[2]  the data (a split record's head)
//	ARGV[3]  the TTL in milliseconds
//	ARGV[4]  the channel of changes
//	ARGV[5]  the gate's key (without Options.Prefix), for the change
const casEpilogue = `
redis.call("HSET", KEYS[1], "v", vs, "d", ARGV[2])
redis.call("PEXPIRE", KEYS[1], ARGV[3])
redis.call("PUBLISH", ARGV[4], vs .. " " .. ARGV[5])
return {1, vs}
`

// casScript is the compare-and-swap of a record written whole (its
// entries removed, if it was split). It returns {1, new version} when it
// wrote, {0, current version} when the current version is not the
// expected one.
var casScript = redis.NewScript(casPrelude + `
if f then
	drop(f, n)
	redis.call("HDEL", KEYS[1], "f", "n", "s")
end
` + casEpilogue)

// splitScript is the compare-and-swap of a record written split.
//
//	ARGV[6]  how many of the stored entries to drop, or -1 to replace
//	         them all
//	ARGV[7]… the entries to add after those kept
//
// It returns what casScript does, or {2, current version} for a change
// (ARGV[6] not -1) of a record that is not split (or whose entries an
// earlier version of this package left behind a whole record): the
// caller then replaces its history.
var splitScript = redis.NewScript(casPrelude + `
local d = tonumber(ARGV[6])
if d >= 0 and not (f and r[4] == r[1]) then
	return {2, cur}
end
if d < 0 then
	if f then
		drop(f, n)
	end
	f, n = 0, 0
else
	d = math.min(d, n - f)
	drop(f, f + d)
	f = f + d
end
for i = 7, #ARGV do
	redis.call("HSET", KEYS[1], field(n), ARGV[i])
	n = n + 1
end
redis.call("HSET", KEYS[1], "f", string.format("%.0f", f), "n", string.format("%.0f", n), "s", vs)
` + casEpilogue)

// loadScript reads a record and, if it has data, refreshes its expiry.
//
//	KEYS[1]  the record's key
//	ARGV[1]  the TTL in milliseconds
//
// It returns {version or false, data or false}, and for a split record
// (entries written by its version) its entries joined by commas third.
var loadScript = redis.NewScript(entriesLua + `
local r = redis.call("HMGET", KEYS[1], "v", "d", "f", "n", "s")
if not r[2] then
	return {r[1], r[2]}
end
redis.call("PEXPIRE", KEYS[1], ARGV[1])
if not r[3] or r[5] ~= r[1] then
	return {r[1], r[2]}
end
return {r[1], r[2], read(tonumber(r[3]), tonumber(r[4]))}
`)

// deleteScript removes a record's data and entries, and leaves its
// version (a tombstone).
//
//	KEYS[1]  the record's key
var deleteScript = redis.NewScript(entriesLua + `
local r = redis.call("HMGET", KEYS[1], "f", "n")
if r[1] then
	drop(tonumber(r[1]), tonumber(r[2]))
	redis.call("HDEL", KEYS[1], "f", "n", "s")
end
return redis.call("HDEL", KEYS[1], "d")
`)

// channel is the Redis pub/sub channel of the store's changes.
func (s *Store) channel() string { return s.prefix + "mcpbind:changes" }

// Watch implements [gate.Watcher]: the writes of every Store with the
// same Options.Prefix on this Redis, with pub/sub. Each write publishes
// "VERSION KEY" on the channel Options.Prefix + "mcpbind:changes", in the
// compare-and-swap script. The store subscribes (on a connection of its
// own, which go-redis reconnects) while it has watchers; Watch returns
// once the subscription is confirmed (or after [gate.FeedReadyWait]).
// Changes published while the connection was down are missed: Redis
// pub/sub keeps nothing.
func (s *Store) Watch(ctx context.Context, prefix string) (<-chan gate.Change, error) {
	return s.feed.Watch(ctx, prefix)
}

// WatchFunc implements [gate.FuncWatcher]: fn is called with each
// change Watch would send, by the goroutine that receives the channel's
// messages.
func (s *Store) WatchFunc(ctx context.Context, prefix string, fn func(gate.Change)) error {
	return s.feed.WatchFunc(ctx, prefix, fn)
}

// listen subscribes to the channel and publishes its messages until ctx
// ends.
func (s *Store) listen(ctx context.Context, publish func(gate.Change), ready func()) {
	ps := s.client.Subscribe(ctx, s.channel())
	defer ps.Close()
	for {
		// Receive returns the subscription's confirmation first; go-redis
		// subscribes again after a reconnection.
		if _, err := ps.Receive(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	ready()
	ch := ps.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			vs, key, found := strings.Cut(m.Payload, " ")
			if v, err := strconv.ParseUint(vs, 10, 64); found && err == nil {
				publish(gate.Change{Key: key, Version: v})
			}
		}
	}
}

// Load implements [gate.Store]. A missing key, a deleted record (a
// tombstone) and an expired one give nil, 0 and no error. Loading a record
// refreshes its expiry.
func (s *Store) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	vals, err := loadScript.Run(ctx, s.client, []string{s.prefix + key}, s.ttlMS).Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, fmt.Errorf("redisstore: loading %q: %w", key, err)
	}
	if len(vals) < 2 || vals[1] == nil {
		return nil, 0, nil
	}
	vs, ok1 := vals[0].(string)
	data, ok2 := vals[1].(string)
	if !ok1 || !ok2 {
		return nil, 0, fmt.Errorf("redisstore: loading %q: unexpected reply %v", key, vals)
	}
	ver, err := strconv.ParseUint(vs, 10, 64)
	if err != nil || ver == 0 {
		return nil, 0, fmt.Errorf("redisstore: loading %q: bad version %q in the record", key, vs)
	}
	if len(vals) == 3 {
		history, ok := vals[2].(string)
		if !ok {
			return nil, 0, fmt.Errorf("redisstore: loading %q: unexpected reply %v", key, vals)
		}
		return histrec.Join([]byte(data), []byte(history)), ver, nil
	}
	return []byte(data), ver, nil
}

// CompareAndSwap implements [gate.Store], atomically, with a Lua
// script. It writes data and a new version and sets the record's expiry to
// the TTL if the current version is old (0: there is no record, or only a
// tombstone). Otherwise the error matches [gate.ErrConflict].
func (s *Store) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	res, err := casScript.Run(ctx, s.client, []string{s.prefix + key},
		strconv.FormatUint(old, 10), data, s.ttlMS, s.channel(), key).Slice()
	ver, _, err := swapped(key, old, res, err)
	return ver, err
}

// CompareAndSwapSplit implements histrec.Store, through which the gate
// writes its workflows' records: CompareAndSwap for a record given as its
// head and history, which it keeps apart, an entry a field of the
// record's hash, once the record takes more than 3 KiB (a smaller one is
// written whole). A write whose history is a change of the stored one
// (w.Delta) sends and writes only the appended entries, and removes the
// dropped ones; another replaces them all. Redis' durability is the
// server's: durable is not read.
func (s *Store) CompareAndSwapSplit(ctx context.Context, key string, old uint64, w *histrec.Write, durable bool) (uint64, error) {
	if data, ok := w.Whole(s.splitAbove); ok {
		return s.CompareAndSwap(ctx, key, old, data)
	}
	head := w.Head
	if head == nil {
		head = []byte{}
	}
	if dropped, appended, ok := w.Change(); ok && old != 0 {
		ver, split, err := s.swapSplit(ctx, key, old, head, dropped, appended)
		if split || err != nil {
			return ver, err
		}
		// Not split yet: its history is replaced.
	}
	ver, _, err := s.swapSplit(ctx, key, old, head, -1, w.History)
	return ver, err
}

// swapSplit runs splitScript: it writes head and, after the first
// dropped entries of the stored history (all for -1), entries. split is
// false if the record is not split and dropped is not -1 (nothing was
// written).
func (s *Store) swapSplit(ctx context.Context, key string, old uint64, head []byte, dropped int, entries []json.RawMessage) (ver uint64, split bool, err error) {
	args := make([]any, 0, 6+len(entries))
	args = append(args, strconv.FormatUint(old, 10), head, s.ttlMS, s.channel(), key, dropped)
	for _, e := range entries {
		args = append(args, []byte(e))
	}
	res, err := splitScript.Run(ctx, s.client, []string{s.prefix + key}, args...).Slice()
	return swapped(key, old, res, err)
}

// SplitAbove implements histrec.Store: 3 KiB.
func (s *Store) SplitAbove() int { return s.splitAbove }

// swapped reads the reply of a compare-and-swap script: the new version;
// a conflict's error, which matches gate.ErrConflict; or split false
// for splitScript's reply that the record is not split.
func swapped(key string, old uint64, res []any, err error) (ver uint64, split bool, _ error) {
	if err != nil {
		return 0, false, fmt.Errorf("redisstore: compare-and-swap of %q: %w", key, err)
	}
	if len(res) != 2 {
		return 0, false, fmt.Errorf("redisstore: compare-and-swap of %q: unexpected reply %v", key, res)
	}
	code, ok1 := res[0].(int64)
	vs, ok2 := res[1].(string)
	if !ok1 || !ok2 {
		return 0, false, fmt.Errorf("redisstore: compare-and-swap of %q: unexpected reply %v", key, res)
	}
	switch code {
	case 0:
		return 0, false, fmt.Errorf("redisstore: compare-and-swap of %q: expected version %d, the record has %s: %w", key, old, vs, gate.ErrConflict)
	case 2:
		return 0, false, nil
	}
	ver, err = strconv.ParseUint(vs, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("redisstore: compare-and-swap of %q: bad new version %q: %w", key, vs, err)
	}
	return ver, true, nil
}

// Keys implements [gate.Lister] with SCAN: the keys of the records
// (not tombstones) that start with prefix, sorted. On a Cluster client it
// scans every master.
func (s *Store) Keys(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	scan := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, escapeGlob(s.prefix+prefix)+"*", 1000).Iterator()
		for it.Next(ctx) {
			k := it.Val()
			if has, err := c.HExists(ctx, k, fieldData).Result(); err != nil {
				return err
			} else if has {
				out = append(out, strings.TrimPrefix(k, s.prefix))
			}
		}
		return it.Err()
	}
	var err error
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		var mu sync.Mutex
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(ctx, node)
		})
	case *redis.Client:
		err = scan(ctx, c)
	default:
		return nil, fmt.Errorf("redisstore: listing keys needs a *redis.Client or *redis.ClusterClient, not %T", s.client)
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: listing %q: %w", prefix, err)
	}
	sort.Strings(out)
	return out, nil
}

// escapeGlob escapes the characters SCAN's MATCH pattern gives a meaning.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Delete implements [gate.Store]. It removes the record's data and
// leaves its version as a tombstone, which expires when the record would
// have (see the package documentation). Deleting a missing key is not an
// error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := deleteScript.Run(ctx, s.client, []string{s.prefix + key}).Err(); err != nil {
		return fmt.Errorf("redisstore: deleting %q: %w", key, err)
	}
	return nil
}
