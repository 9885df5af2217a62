package redisstore

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/store"
)

// keys names the keys of one store: every key starts with the hash tag
// {prefix}, so that the whole store lives in one slot of a cluster (see
// the package doc).
type keys struct {
	base  string // "{prefix}:"
	lex   string // sorted set of row ids, all of score 0 (ZRANGEBYLEX)
	meta  string // hash row id -> "updated expires hasVectors"
	exp   string // sorted set of row ids with an expiry, by expiry (ms)
	vset  string // vector set (Redis 8)
	lock  string // the write lock: a lease holding a transaction's token
	items string // prefix of the item hashes: items + row id
	ix    string // hash: the code index's state (index.go)
	snap  string // list: the code index's snapshot parts
}

func newKeys(prefix string) keys {
	b := "{" + prefix + "}:"
	return keys{base: b, lex: b + "k", meta: b + "m", exp: b + "x", vset: b + "vs", lock: b + "lock", items: b + "r:",
		ix: b + "ix", snap: b + "ixs"}
}

// rowID is a row's member in the sorted set of rows: its namespace, a NUL
// and its key. Neither holds a NUL (store.ValidatePrefix, ValidateKey), so
// the id is unambiguous, and the ids of one namespace sort by key in byte
// order.
func rowID(k store.RowKey) string { return k.NS + "\x00" + k.Key }

// splitID is the inverse of rowID.
func splitID(id string) (store.RowKey, bool) {
	i := strings.IndexByte(id, 0)
	if i < 0 {
		return store.RowKey{}, false
	}
	return store.RowKey{NS: id[:i], Key: id[i+1:]}, true
}

// lexRange is a ZRANGEBYLEX range [min, max).
type lexRange struct{ min, max string }

// prefixRanges are the ranges of row ids under prefix: the namespace itself
// (ns NUL …) and those below it (ns '.' …); everything for the root.
func prefixRanges(prefix store.Namespace) []lexRange {
	if len(prefix) == 0 {
		return []lexRange{{"-", "+"}}
	}
	p := prefix.String()
	return []lexRange{{"[" + p + "\x00", "(" + p + "\x01"}, {"[" + p + ".", "(" + p + "/"}}
}

// under reports whether the stored namespace ns is prefix or under it.
func under(ns string, prefix store.Namespace) bool {
	if len(prefix) == 0 {
		return true
	}
	p := prefix.String()
	return ns == p || strings.HasPrefix(ns, p+".")
}

// header is what the meta hash keeps of a row: enough to order, page and
// expire rows without reading their values.
type header struct {
	id      string
	key     store.RowKey
	updated int64 // Unix ns
	expires int64 // Unix ns; 0: never
	vectors bool
}

func (h header) live(now time.Time) bool {
	return h.expires == 0 || h.expires > now.UnixNano()
}

func parseMeta(id, m string) (header, error) {
	k, ok := splitID(id)
	f := strings.Fields(m)
	if !ok || len(f) != 3 {
		return header{}, fmt.Errorf("%w: row header %q", ErrRecord, m)
	}
	u, err1 := strconv.ParseInt(f[0], 10, 64)
	e, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || (f[2] != "0" && f[2] != "1") {
		return header{}, fmt.Errorf("%w: row header %q", ErrRecord, m)
	}
	return header{id: id, key: k, updated: u, expires: e, vectors: f[2] == "1"}, nil
}

// unixNano is t in Unix nanoseconds, 0 for the zero time (never).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// expScore is an expiry's score in the expiry set: milliseconds, rounded
// up so that the sweep's range (score ≤ now in ms) never misses a row; the
// sweep checks the exact expiry in the header.
func expScore(n int64) string {
	return strconv.FormatInt((n+999_999)/1_000_000, 10)
}

// encodeVectors is an item's vectors as the field x of its hash: a count,
// then per vector its field name, norm and float32s, little-endian.
func encodeVectors(vs []store.Vector) []byte {
	n := 4
	for _, v := range vs {
		n += 2 + len(v.Field) + 8 + 4 + 4*len(v.Vec)
	}
	b := make([]byte, 0, n)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vs)))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(v.Field)))
		b = append(b, v.Field...)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Norm))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v.Vec)))
		for _, f := range v.Vec {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	return b
}

// decodeVectors is the inverse of encodeVectors.
func decodeVectors(b []byte) ([]store.Vector, error) {
	bad := fmt.Errorf("%w: vectors field of %d bytes", ErrRecord, len(b))
	if len(b) < 4 {
		return nil, bad
	}
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if n > len(b) {
		return nil, bad
	}
	vs := make([]store.Vector, 0, n)
	for range n {
		if len(b) < 2 {
			return nil, bad
		}
		fl := int(binary.LittleEndian.Uint16(b))
		b = b[2:]
		if len(b) < fl+12 {
			return nil, bad
		}
		v := store.Vector{Field: string(b[:fl])}
		b = b[fl:]
		v.Norm = math.Float64frombits(binary.LittleEndian.Uint64(b))
		d := int(binary.LittleEndian.Uint32(b[8:]))
		b = b[12:]
		if d > len(b)/4 {
			return nil, bad
		}
		v.Vec = make([]float32, d)
		for i := range v.Vec {
			v.Vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		b = b[4*d:]
		vs = append(vs, v)
	}
	if len(b) != 0 {
		return nil, bad
	}
	return vs, nil
}

// fp32 is v as VADD's FP32 blob.
func fp32(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// prefixTag is the attribute value naming one namespace prefix in the
// vector set: a hash, so that a FILTER expression never quotes a label
// (which may hold any character but '.' and NUL).
func prefixTag(p string) string {
	s := sha256.Sum256([]byte(p))
	return hex.EncodeToString(s[:12])
}

// vectorAttrs is the attribute JSON of the vectors of a row of namespace
// ns: the tags of every prefix of ns, which VSIM's FILTER matches with
// `"tag" in .p`. Matches are checked again on the row (a tag collision
// cannot widen a search).
func vectorAttrs(ns string) string {
	labels := strings.Split(ns, ".")
	tags := make([]string, len(labels))
	for i := range labels {
		tags[i] = prefixTag(strings.Join(labels[:i+1], "."))
	}
	b, _ := json.Marshal(map[string][]string{"p": tags})
	return string(b)
}

// splitElement splits a vector set element, "<row id>\x00<i>" for
// vector i of the row (the commit script names them so), into its parts.
func splitElement(e string) (id string, i int, ok bool) {
	j := strings.LastIndexByte(e, 0)
	if j < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(e[j+1:])
	return e[:j], n, err == nil && n >= 0
}
