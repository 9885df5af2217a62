package redissaver

import (
	"strings"
	"sync"
)

// headCache remembers, per checkpoint, the stamp and value fields of the
// head this driver last wrote or read, so that a read can fetch the
// values in the same MULTI as the head (one round trip instead of two).
// It is only a guess: a read uses the values so fetched only when the
// head it read in that MULTI holds the same stamp (a stamp is new at
// every write of a checkpoint, so the same stamp means the same channel
// versions, and one MULTI means the values are those of that head). A
// stale or missing entry costs the second round, never a wrong read.
type headCache struct {
	mu sync.Mutex
	m  map[string]*seenHead
}

// seenHead is a head as the cache keeps it.
type seenHead struct {
	stamp  string
	fields []string // the value fields (ns·channel·version) it references
}

// maxSeen bounds the cache: past it, the cache starts again empty.
const maxSeen = 4096

func seenKey(thread, field string) string { return thread + sep + field }

// get is the entry of checkpoint field (ns·id) of thread, or nil.
func (c *headCache) get(thread, field string) *seenHead {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[seenKey(thread, field)]
}

// put remembers h as the head of checkpoint r of thread. Heads of a
// format before 4 are not kept: their reads need the parent's sends,
// read in the second round anyway.
func (c *headCache) put(thread string, r ref, h *head) {
	if h.v < 4 {
		return
	}
	// The fields are substrings of one string: two allocations for the
	// entry's fields instead of one per channel.
	n := 0
	for ch, ver := range h.versions {
		n += len(r.ns) + len(ch) + len(ver) + 2
	}
	var sb strings.Builder
	sb.Grow(n)
	var endsBuf [16]int // a graph's few channels: on the stack
	ends := endsBuf[:0]
	for ch, ver := range h.versions {
		sb.WriteString(r.ns)
		sb.WriteString(sep)
		sb.WriteString(ch)
		sb.WriteString(sep)
		sb.WriteString(ver)
		ends = append(ends, sb.Len())
	}
	all := sb.String()
	fields := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		fields[i], start = all[start:end], end
	}
	e := &seenHead{stamp: h.stamp, fields: fields}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSeen {
		c.m = make(map[string]*seenHead)
	}
	c.m[thread+sep+r.ns+sep+r.id] = e // seenKey(thread, nsID(r.ns, r.id)), one concatenation
}
