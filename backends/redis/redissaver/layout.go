package redissaver

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// The layout (doc.go writes it down). sep joins the parts of a hash field
// or sorted-set member: identifiers never hold a NUL byte
// (checkpointer.ValidateText), so the parts split back unambiguously, and
// NUL sorts below every other byte, so "ns\x00id" members of one
// namespace sort by id.
const sep = "\x00"

// keys are the keys of one thread. Every one holds the thread's hash tag,
// so that the thread lives in one cluster slot and a script or MULTI can
// touch all of them.
type keys struct {
	lock string // STRING: the token of the Update holding the thread
	cp   string // HASH ns·id -> checkpoint record (type, document, metadata)
	par  string // HASH ns·id -> parent id ("" for none); the first one stays
	hd   string // HASH ns·id -> head record (format, run id, stamp, versions)
	byNS string // ZSET (score 0) ns·id: a namespace's checkpoints by id
	byID string // ZSET (score 0) id·ns: the thread's checkpoints by id
	val  string // HASH ns·channel·version -> value record
	wk   string // ZSET (score 0) ns·id of every checkpoint holding writes
	w    string // prefix of HASH w+ns·id: task·idx -> write record
}

// tag is the thread's hash tag: the thread id with '%' and '}' escaped,
// so that the tag ends where the id does (a cluster hashes what lies
// between the first '{' and the next '}').
func tag(thread string) string {
	if !strings.ContainsAny(thread, "%}") {
		return thread
	}
	return strings.NewReplacer("%", "%25", "}", "%7D").Replace(thread)
}

func (d *driver) keys(thread string) keys {
	p := d.prefix + ":{" + tag(thread) + "}:"
	return keys{lock: p + "lock", cp: p + "cp", par: p + "par", hd: p + "hd", byNS: p + "ns", byID: p + "id",
		val: p + "val", wk: p + "wk", w: p + "w:"}
}

// writes is the key of the writes of checkpoint id of namespace ns.
func (k keys) writes(ns, id string) string { return k.w + ns + sep + id }

// fixed are the thread's keys but its lock and its writes.
func (k keys) fixed() []string { return []string{k.cp, k.par, k.hd, k.byNS, k.byID, k.val, k.wk} }

func nsID(ns, id string) string { return ns + sep + id }

// splitPair splits a two-part member or field.
func splitPair(s string) (a, b string, ok bool) {
	i := strings.IndexByte(s, 0)
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func valField(ns, channel, version string) string { return ns + sep + channel + sep + version }

func writeField(task string, idx int) string { return task + sep + strconv.Itoa(idx) }

// pack joins parts, each prefixed by its length (uvarint), with a flag
// byte per part telling nil from empty.
func pack(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + binary.MaxVarintLen64 + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		if p == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// unpack splits what pack joined into want parts (any number when want
// is negative).
func unpack(b []byte, want int) ([][]byte, error) {
	parts := make([][]byte, 0, max(want, 0))
	for len(b) > 0 {
		flag := b[0]
		b = b[1:]
		if flag == 0 {
			parts = append(parts, nil)
			continue
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, fmt.Errorf("%w: truncated record", ErrRecord)
		}
		parts = append(parts, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	if want >= 0 && len(parts) != want {
		return nil, fmt.Errorf("%w: %d parts, want %d", ErrRecord, len(parts), want)
	}
	return parts, nil
}

// packVersions is a channel-version map as pack parts (channel, version…).
func packVersions(v map[string]string) []byte {
	parts := make([][]byte, 0, 2*len(v))
	for ch, ver := range v {
		parts = append(parts, []byte(ch), []byte(ver))
	}
	return pack(parts...)
}

func unpackVersions(b []byte) (map[string]string, error) {
	parts, err := unpack(b, -1)
	if err != nil {
		return nil, err
	}
	if len(parts)%2 != 0 {
		return nil, fmt.Errorf("%w: odd version list", ErrRecord)
	}
	v := make(map[string]string, len(parts)/2)
	for i := 0; i < len(parts); i += 2 {
		v[string(parts[i])] = string(parts[i+1])
	}
	return v, nil
}

// head is a checkpoint's head record: what removals decide on and what a
// read needs before it fetches the values.
type head struct {
	v        int
	runID    string
	stamp    string // new at every write of the checkpoint: a read sees whether it changed
	versions map[string]string
}

func (h *head) pack() []byte {
	return pack([]byte(strconv.Itoa(h.v)), []byte(h.runID), []byte(h.stamp), packVersions(h.versions))
}

func unpackHead(b []byte) (*head, error) {
	p, err := unpack(b, 4)
	if err != nil {
		return nil, err
	}
	v, err := strconv.Atoi(string(p[0]))
	if err != nil {
		return nil, fmt.Errorf("%w: format %q", ErrRecord, p[0])
	}
	vers, err := unpackVersions(p[3])
	if err != nil {
		return nil, err
	}
	return &head{v: v, runID: string(p[1]), stamp: string(p[2]), versions: vers}, nil
}
