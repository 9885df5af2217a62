package memkeys

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memvault/memvault/internal/idlimit"
	"github.com/memvault/memvault/keys"
)

// Table is an in-memory keys.Table. The zero value is not usable; use New.
type Table struct {
	mu       sync.Mutex
	keys     map[string][]keys.WrappedKey // by subject, oldest version first
	threads  map[string]string            // thread → subject
	sources  map[string]map[string]bool   // thread → the threads it is a copy of
	erasures map[string]*keys.Erasure     // by subject
}

var (
	_ keys.ThreadTable  = (*Table)(nil)
	_ keys.ErasureTable = (*Table)(nil)
	_ keys.KEKLister    = (*Table)(nil)
)

// New returns an empty table.
func New() *Table {
	return &Table{keys: map[string][]keys.WrappedKey{}, threads: map[string]string{}, sources: map[string]map[string]bool{}, erasures: map[string]*keys.Erasure{}}
}

// erasing reports whether subject was erased and not readmitted; t.mu is
// held.
func (t *Table) erasing(subject string) bool {
	e := t.erasures[subject]
	return e != nil && !e.Readmitted
}

// StartErasure implements keys.ErasureTable.
func (t *Table) StartErasure(_ context.Context, subject string, now time.Time) (keys.Erasure, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.erasures[subject]
	if e == nil || e.Readmitted {
		e = &keys.Erasure{Subject: subject, Started: now}
		t.erasures[subject] = e
	}
	e.Done, e.Finished = false, time.Time{}
	var ids []string
	owners := []string{subject}
	for _, th := range t.reach(subject) {
		owners = append(owners, keys.ThreadKeyOwner(th))
		if _, ok := t.threads[th]; !ok {
			// A copy bound to no one: bound to subject, as a tombstone.
			t.threads[th] = subject
		}
	}
	for _, o := range owners {
		for _, k := range t.keys[o] {
			ids = append(ids, k.ID)
			clear(k.Wrapped)
		}
		delete(t.keys, o)
	}
	e.KeyIDs = keys.MergeKeyIDs(e.KeyIDs, ids)
	return cloneErasure(e), nil
}

func cloneErasure(e *keys.Erasure) keys.Erasure {
	c := *e
	c.KeyIDs = slices.Clone(e.KeyIDs)
	c.Trace = slices.Clone(e.Trace)
	return c
}

// Erasure implements keys.ErasureTable.
func (t *Table) Erasure(_ context.Context, subject string) (*keys.Erasure, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.erasures[subject]
	if e == nil {
		return nil, nil
	}
	c := cloneErasure(e)
	return &c, nil
}

// AddErased implements keys.ErasureTable.
func (t *Table) AddErased(_ context.Context, subject string, threads, items int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.erasures[subject]; e != nil && !e.Done {
		e.Threads = max(e.Threads, threads)
		e.Items += items
	}
	return nil
}

// Purge implements keys.ErasureTable: destroyed keys were zeroed in memory
// when they were dropped, so there is nothing to wait for.
func (t *Table) Purge(context.Context, keys.Erasure, keys.PurgeOptions) error { return nil }

// FinishErasure implements keys.ErasureTable.
func (t *Table) FinishErasure(_ context.Context, subject string, now time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.erasures[subject]; e != nil && !e.Done {
		e.Done, e.Finished = true, now
	}
	return nil
}

// Readmit implements keys.ErasureTable.
func (t *Table) Readmit(_ context.Context, subject string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.erasures[subject]
	if e == nil || !e.Done {
		return keys.ErrNotErased
	}
	e.Readmitted = true
	// The bindings of its threads were kept as tombstones until now, and
	// what they were copied from or to with them.
	for th, srcs := range t.sources {
		for src := range srcs {
			if t.threads[th] == subject || t.threads[src] == subject {
				delete(srcs, src)
			}
		}
		if len(srcs) == 0 {
			delete(t.sources, th)
		}
	}
	for th, s := range t.threads {
		if s == subject {
			delete(t.threads, th)
		}
	}
	return nil
}

// reach returns the threads an erasure of subject reaches: those bound to
// it and every thread that follows one of them, transitively; t.mu is
// held.
func (t *Table) reach(subject string) []string {
	seen := map[string]bool{}
	var todo []string
	for th, s := range t.threads {
		if s == subject {
			seen[th] = true
			todo = append(todo, th)
		}
	}
	for len(todo) > 0 {
		src := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for th, srcs := range t.sources {
			if srcs[src] && !seen[th] {
				seen[th] = true
				todo = append(todo, th)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for th := range seen {
		out = append(out, th)
	}
	slices.Sort(out)
	return out
}

// FollowThread implements keys.ThreadTable.
func (t *Table) FollowThread(_ context.Context, thread, source string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	// source alone, not what it follows: an erasure binds every unbound
	// thread it reaches to its subject (see the SQLite table).
	if s := t.threads[source]; s != "" && t.erasing(s) {
		return fmt.Errorf("keys/memkeys: copy of %s (%s): %w", idlimit.Name("thread", source), idlimit.Name("subject", s), keys.ErrSubjectErased)
	}
	if t.sources[thread] == nil {
		t.sources[thread] = map[string]bool{}
	}
	t.sources[thread][source] = true
	return nil
}

// LiveKey implements keys.ErasureTable.
func (t *Table) LiveKey(_ context.Context, _, keyID string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ks := range t.keys {
		if slices.ContainsFunc(ks, func(k keys.WrappedKey) bool { return k.ID == keyID }) {
			return true, nil
		}
	}
	return false, nil
}

// BindThread implements keys.ThreadTable.
func (t *Table) BindThread(_ context.Context, thread, subject string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.threads[thread]; ok {
		return s, nil
	}
	if t.erasing(subject) {
		return "", fmt.Errorf("keys/memkeys: bind %s to %s: %w", idlimit.Name("thread", thread), idlimit.Name("subject", subject), keys.ErrSubjectErased)
	}
	t.threads[thread] = subject
	return subject, nil
}

// BoundSubject implements keys.ThreadTable.
func (t *Table) BoundSubject(_ context.Context, thread string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.threads[thread], nil
}

// SubjectThreads implements keys.ThreadTable.
func (t *Table) SubjectThreads(_ context.Context, subject string) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reach(subject), nil
}

// UnbindThreads implements keys.ThreadTable.
func (t *Table) UnbindThreads(_ context.Context, subject string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for th, s := range t.threads {
		if s == subject {
			delete(t.threads, th)
		}
	}
	return nil
}

func clone(k keys.WrappedKey) keys.WrappedKey {
	k.Wrapped = slices.Clone(k.Wrapped)
	return k
}

// Keys implements keys.Table.
func (t *Table) Keys(_ context.Context, subject string) ([]keys.WrappedKey, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ks := t.keys[subject]
	out := make([]keys.WrappedKey, 0, len(ks))
	for i := len(ks) - 1; i >= 0; i-- {
		out = append(out, clone(ks[i]))
	}
	return out, nil
}

// Insert implements keys.Table.
func (t *Table) Insert(_ context.Context, k keys.WrappedKey) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range t.keys[k.Subject] {
		if o.Version == k.Version {
			return keys.ErrKeyExists
		}
	}
	if t.erasing(k.Subject) {
		return fmt.Errorf("keys/memkeys: key of %s: %w", idlimit.Name("subject", k.Subject), keys.ErrSubjectErased)
	}
	if th, ok := keys.ThreadOfKeyOwner(k.Subject); ok {
		if s := t.threads[th]; s != "" && t.erasing(s) {
			return fmt.Errorf("keys/memkeys: key of %s of %s: %w", idlimit.Name("thread", th), idlimit.Name("subject", s), keys.ErrSubjectErased)
		}
	}
	ks := append(t.keys[k.Subject], clone(k))
	slices.SortFunc(ks, func(a, b keys.WrappedKey) int { return cmp.Compare(a.Version, b.Version) })
	t.keys[k.Subject] = ks
	return nil
}

// Destroy implements keys.Table: the wrapped bytes are zeroed, then
// dropped.
func (t *Table) Destroy(_ context.Context, subject string) ([]keys.WrappedKey, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ks := t.keys[subject]
	out := make([]keys.WrappedKey, 0, len(ks))
	for _, k := range ks {
		c := clone(k)
		c.Wrapped = nil
		out = append(out, c)
		clear(k.Wrapped)
	}
	delete(t.keys, subject)
	return out, nil
}

// Rewrap implements keys.Table.
func (t *Table) Rewrap(_ context.Context, subject string, version int, oldKEK, newKEK string, wrapped []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, k := range t.keys[subject] {
		if k.Version == version && k.KEK == oldKEK {
			clear(k.Wrapped)
			t.keys[subject][i].KEK, t.keys[subject][i].Wrapped = newKEK, slices.Clone(wrapped)
			return true, nil
		}
	}
	return false, nil
}

// Page implements keys.Table.
func (t *Table) Page(_ context.Context, afterSubject string, afterVersion, limit int) ([]keys.WrappedKey, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	subjects := make([]string, 0, len(t.keys))
	for s := range t.keys {
		if s >= afterSubject {
			subjects = append(subjects, s)
		}
	}
	slices.Sort(subjects)
	var out []keys.WrappedKey
	for _, s := range subjects {
		for _, k := range t.keys[s] {
			if s == afterSubject && k.Version <= afterVersion {
				continue
			}
			if len(out) == limit {
				return out, nil
			}
			out = append(out, clone(k))
		}
	}
	return out, nil
}

// KEKs implements keys.KEKLister.
func (t *Table) KEKs(_ context.Context, limit int) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var all []string
	for _, ks := range t.keys {
		for _, k := range ks {
			all = append(all, k.KEK)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	return all[:min(len(all), max(limit, 0))], nil
}
