package redissaver

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unsafe"
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
	return tagEscaper.Replace(thread)
}

// untag is the thread id of a hash tag (tag's inverse).
func untag(t string) string {
	if !strings.Contains(t, "%") {
		return t
	}
	return tagUnescaper.Replace(t)
}

var (
	tagEscaper   = strings.NewReplacer("%", "%25", "}", "%7D")
	tagUnescaper = strings.NewReplacer("%7D", "}", "%25", "%")
)

func (d *driver) keys(thread string) keys {
	// Every key is a substring of one string: one allocation for the nine
	// keys, which every call builds (a put's client work is a few
	// allocations; nine concatenations were a twentieth of it).
	t := tag(thread)
	names := [...]string{"lock", "cp", "par", "hd", "ns", "id", "val", "wk", "w:"}
	p := len(d.prefix) + len(t) + 4 // prefix ":{" tag "}:"
	var sb strings.Builder
	sb.Grow(len(names)*p + 20)
	var ends [len(names)]int
	for i, n := range names {
		sb.WriteString(d.prefix)
		sb.WriteString(":{")
		sb.WriteString(t)
		sb.WriteString("}:")
		sb.WriteString(n)
		ends[i] = sb.Len()
	}
	all := sb.String()
	key := func(i int) string {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return all[start:ends[i]]
	}
	return keys{lock: key(0), cp: key(1), par: key(2), hd: key(3), byNS: key(4), byID: key(5),
		val: key(6), wk: key(7), w: key(8)}
}

// writes is the key of the writes of checkpoint id of namespace ns.
func (k keys) writes(ns, id string) string { return k.w + ns + sep + id }

// fixed are the thread's keys but its lock and its writes.
func (k keys) fixed() []string { return []string{k.cp, k.par, k.hd, k.byNS, k.byID, k.val, k.wk} }

func nsID(ns, id string) string { return ns + sep + id }

// appendNsID appends nsID(ns, id) to b.
func appendNsID(b []byte, ns, id string) []byte {
	return append(append(append(b, ns...), sep...), id...)
}

// splitPair splits a two-part member or field.
func splitPair(s string) (a, b string, ok bool) {
	i := strings.IndexByte(s, 0)
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func valField(ns, channel, version string) string { return ns + sep + channel + sep + version }

// appendValField appends valField(ns, channel, version) to b.
func appendValField(b []byte, ns, channel, version string) []byte {
	return append(append(appendNsID(b, ns, channel), sep...), version...)
}

func writeField(task string, idx int) string { return task + sep + strconv.Itoa(idx) }

// appendWriteField appends writeField(task, idx) to b.
func appendWriteField(b []byte, task string, idx int) []byte {
	return strconv.AppendInt(append(append(b, task...), sep...), int64(idx), 10)
}

// pack joins parts, each prefixed by its length (uvarint), with a flag
// byte per part telling nil from empty.
func pack(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += partLen(len(p))
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = appendPart(b, p)
	}
	return b
}

// partLen is the most a part of n bytes takes in a pack.
func partLen(n int) int { return 1 + binary.MaxVarintLen64 + n }

// appendPart appends p as pack writes a part.
func appendPart(b, p []byte) []byte {
	if p == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// appendStrPart appends s as a (non-nil) part: pack's []byte(s) without
// the conversion's copy.
func appendStrPart(b []byte, s string) []byte {
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// uvarintLen is the length of n as a uvarint.
func uvarintLen(n int) int {
	l := 1
	for u := uint64(n); u >= 0x80; u >>= 7 {
		l++
	}
	return l
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

// versionsLen is the exact length of appendVersions(nil, v).
func versionsLen(v map[string]string) int {
	n := 0
	for ch, ver := range v {
		n += 2 + uvarintLen(len(ch)) + len(ch) + uvarintLen(len(ver)) + len(ver)
	}
	return n
}

// appendVersions appends a channel-version map as pack parts (channel,
// version…), which unpackVersions reads.
func appendVersions(b []byte, v map[string]string) []byte {
	for ch, ver := range v {
		b = appendStrPart(b, ch)
		b = appendStrPart(b, ver)
	}
	return b
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

// pack is the head's record, in one allocation: pack of the format, the
// run id, the stamp and the version list (appendVersions), written in
// place.
func (h *head) pack() []byte {
	var num [20]byte
	return h.appendPack(make([]byte, 0, h.packLen(num[:0])), num[:0])
}

// packLen is the length of h's record; num is scratch for its format
// number's digits.
func (h *head) packLen(num []byte) int {
	v := strconv.AppendInt(num, int64(h.v), 10)
	return partLen(len(v)) + partLen(len(h.runID)) + partLen(len(h.stamp)) + partLen(versionsLen(h.versions))
}

// appendPack appends h's record (pack) to b; num is scratch for its
// format number's digits.
func (h *head) appendPack(b, num []byte) []byte {
	b = appendPart(b, strconv.AppendInt(num, int64(h.v), 10))
	b = appendStrPart(b, h.runID)
	b = appendStrPart(b, h.stamp)
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(versionsLen(h.versions)))
	return appendVersions(b, h.versions)
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

// argBuf builds a script's arguments in one buffer: each argument is a
// substring of it, or a string given as is, and the call receives each
// as a *string into one array, which go-redis writes as the string. The
// bytes sent are those of the same arguments as strings or []byte.
type argBuf struct {
	buf   []byte
	start int      // where the argument being written began
	strs  []string // the arguments so far
}

// grow makes room for n bytes of arguments and m arguments.
func (a *argBuf) grow(n, m int) {
	a.buf = make([]byte, 0, n)
	a.strs = make([]string, 0, m)
}

// end ends the argument written since the last one. Its bytes are
// written once and never again (an append past the buffer's capacity
// moves on to a new array and leaves the old one to the strings made of
// it), so the string may share them.
func (a *argBuf) end() {
	s := ""
	if n := len(a.buf) - a.start; n > 0 {
		s = unsafe.String(&a.buf[a.start], n)
	}
	a.strs = append(a.strs, s)
	a.start = len(a.buf)
}

// add adds s as is (an argument held elsewhere).
func (a *argBuf) add(s string) { a.strs = append(a.strs, s) }

// args are the arguments as *string, after lead empty slots (the token
// and the fence, which argv sets).
func (a *argBuf) args(lead int) []any {
	out := make([]any, lead, lead+len(a.strs))
	for i := range a.strs {
		out = append(out, &a.strs[i])
	}
	return out
}
