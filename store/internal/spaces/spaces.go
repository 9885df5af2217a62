package spaces

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// Keys is what a store's serializer offers when it keeps per-subject keys
// (keys.Hierarchy).
type Keys interface {
	// Subjects says which namespaces are whose.
	Subjects() keys.Subjects
	// SubjectRotation is the rotation of subject's vectors; nil when the
	// subject has no keys and create is false.
	SubjectRotation(ctx context.Context, subject string, dims int, create bool) (*embeddings.Rotation, error)
}

// Spaces are the vector spaces of a store's subjects. A nil *Spaces is one
// shared space: every method then leaves vectors as they are.
type Spaces struct {
	keys   Keys
	prefix store.Namespace // the namespace prefix subjects' labels follow
	dotted string          // prefix.String() + "."
	dims   int
}

// Of returns the spaces of a store whose serializer is s and whose vectors
// have dims dimensions: nil unless s keeps per-subject keys that assign
// store namespaces to subjects.
func Of(s serde.Serializer, dims int) *Spaces {
	k, ok := s.(Keys)
	if !ok {
		return nil
	}
	p := k.Subjects().NamespacePrefix
	if len(p) == 0 {
		return nil
	}
	ns := store.Namespace(slices.Clone(p))
	return &Spaces{keys: k, prefix: ns, dotted: ns.String() + ".", dims: dims}
}

// Suffix is what the name of the store's vectors adds to its embedder's
// name (see items.Config.VectorName): "+subjects:<prefix>", naming the
// namespace whose labels choose the spaces, or "" for one shared space. A
// store whose vectors were made otherwise is refused
// (store.ErrEmbedderMismatch) until they are re-embedded.
func (sp *Spaces) Suffix() string {
	if sp == nil {
		return ""
	}
	return "+subjects:" + sp.prefix.String()
}

// subjectOf is the subject of namespace ns (as stored), "" for none: as
// keys.Subjects.NamespaceSubject, without splitting ns.
func (sp *Spaces) subjectOf(ns string) string {
	rest, ok := strings.CutPrefix(ns, sp.dotted)
	if !ok {
		return ""
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// Rotate moves vecs, the vectors of an item of namespace ns (as stored), in
// place, into the item's space: rotated by its subject's rotation (made
// with the subject's first key when it has none yet), unchanged for an
// item of no subject.
func (sp *Spaces) Rotate(ctx context.Context, ns string, vecs [][]float32) error {
	if sp == nil || len(vecs) == 0 {
		return nil
	}
	subject := sp.subjectOf(ns)
	if subject == "" {
		return nil
	}
	r, err := sp.keys.SubjectRotation(ctx, subject, sp.dims, true)
	if err != nil {
		return fmt.Errorf("vectors of %s: %w", ns, err)
	}
	for i, v := range vecs {
		if vecs[i], err = r.Apply(v); err != nil {
			return fmt.Errorf("vectors of %s: %w", ns, err)
		}
	}
	return nil
}

// Query is a search's query vector in each space the search meets,
// computed once per space. It is not safe for concurrent use.
type Query struct {
	sp        *Spaces
	base      []float32
	bySubject map[string][]float32 // nil: the subject has no keys
}

// NewQuery returns the query whose vector in the shared space is base.
func (sp *Spaces) NewQuery(base []float32) *Query {
	return &Query{sp: sp, base: base}
}

// Single returns the query of a search under prefix when every item under
// prefix is in one space (single true): that space's query, nil when the
// space is a subject's whose keys are gone (none of its vectors can be
// scored). single is false when the prefix may hold items of several
// subjects: the search must then compare each vector with the query of its
// own space (For).
func (q *Query) Single(ctx context.Context, prefix store.Namespace) (vec []float32, single bool, err error) {
	sp := q.sp
	if sp == nil {
		return q.base, true, nil
	}
	n := len(sp.prefix)
	if len(prefix) > n && slices.Equal(prefix[:n], sp.prefix) {
		v, err := q.subject(ctx, prefix[n])
		return v, true, err
	}
	if len(prefix) <= n && slices.Equal(prefix, sp.prefix[:len(prefix)]) {
		return nil, false, nil
	}
	return q.base, true, nil
}

// For returns the query in the space of namespace ns (as stored): nil when
// ns is a subject's whose keys are gone.
func (q *Query) For(ctx context.Context, ns string) ([]float32, error) {
	if q.sp == nil {
		return q.base, nil
	}
	return q.subject(ctx, q.sp.subjectOf(ns))
}

// Subject returns the subject of namespace ns (as stored): the space For
// finds, "" for the shared one.
func (q *Query) Subject(ns string) string {
	if q.sp == nil {
		return ""
	}
	return q.sp.subjectOf(ns)
}

// SubjectPrefix returns the namespace prefix that subjects' labels follow,
// nil for one shared space.
func (q *Query) SubjectPrefix() store.Namespace {
	if q.sp == nil {
		return nil
	}
	return q.sp.prefix
}

// Vector returns the query in subject's space ("" for the shared one); nil
// when the subject has no keys.
func (q *Query) Vector(ctx context.Context, subject string) ([]float32, error) {
	return q.subject(ctx, subject)
}

func (q *Query) subject(ctx context.Context, subject string) ([]float32, error) {
	if subject == "" || q.sp == nil {
		return q.base, nil
	}
	if v, ok := q.bySubject[subject]; ok {
		return v, nil
	}
	r, err := q.sp.keys.SubjectRotation(ctx, subject, q.sp.dims, false)
	if err != nil {
		return nil, err
	}
	var v []float32
	if r != nil {
		if v, err = r.Apply(q.base); err != nil {
			return nil, err
		}
	}
	if q.bySubject == nil {
		q.bySubject = map[string][]float32{}
	}
	q.bySubject[subject] = v
	return v, nil
}

// PerSpace builds one T per space a search meets (a scorer, an estimator)
// from the query in that space, and finds it by namespace. Resolve may read
// keys; Lookup never does, so that a driver can resolve the namespaces it
// will meet first and then score under its own locks. It is not safe for
// concurrent use.
type PerSpace[T any] struct {
	q         *Query
	build     func([]float32) T
	bySubject map[string]*entry[T]
	byNS      map[string]nsEntry[T]
	lastNS    string
	last      *entry[T]
}

// nsEntry is a namespace's entry, with the namespace (so that switching to
// a known namespace read into a buffer allocates nothing).
type nsEntry[T any] struct {
	ns string
	e  *entry[T]
}

type entry[T any] struct {
	v  T
	ok bool // false: the space's keys are gone, its vectors are skipped
}

// NewPerSpace returns the PerSpace of q's query made by build.
func NewPerSpace[T any](q *Query, build func([]float32) T) *PerSpace[T] {
	return &PerSpace[T]{q: q, build: build, bySubject: map[string]*entry[T]{}, byNS: map[string]nsEntry[T]{}}
}

// Resolve returns the T of namespace ns's space; ok is false when the
// space's keys are gone (skip its vectors).
func (p *PerSpace[T]) Resolve(ctx context.Context, ns string) (v T, ok bool, err error) {
	if p.last != nil && ns == p.lastNS {
		return p.last.v, p.last.ok, nil
	}
	ne, known := p.byNS[ns]
	e := ne.e
	if !known {
		subject := p.q.Subject(ns)
		if e = p.bySubject[subject]; e == nil {
			vec, err := p.q.subject(ctx, subject)
			if err != nil {
				return v, false, err
			}
			e = &entry[T]{ok: vec != nil}
			if e.ok {
				e.v = p.build(vec)
			}
			p.bySubject[subject] = e
		}
		p.byNS[ns] = nsEntry[T]{ns, e}
	}
	p.lastNS, p.last = ns, e
	return e.v, e.ok, nil
}

// ResolveBytes is Resolve of a namespace read into a buffer: it allocates
// only the first time it meets the namespace.
func (p *PerSpace[T]) ResolveBytes(ctx context.Context, ns []byte) (v T, ok bool, err error) {
	if p.last != nil && string(ns) == p.lastNS {
		return p.last.v, p.last.ok, nil
	}
	if ne, known := p.byNS[string(ns)]; known {
		p.last, p.lastNS = ne.e, ne.ns
		return ne.e.v, ne.e.ok, nil
	}
	return p.Resolve(ctx, string(ns))
}

// Lookup returns the T of namespace ns's space as Resolve found it, without
// reading keys: known is false when Resolve has not met ns.
func (p *PerSpace[T]) Lookup(ns string) (v T, ok, known bool) {
	ne, known := p.byNS[ns]
	if !known {
		return v, false, false
	}
	return ne.e.v, ne.e.ok, true
}
