package audit

import (
	"context"
	"sync"
)

// MemoryTable is an in-process Table, for tests and in-memory programs.
type MemoryTable struct {
	mu      sync.Mutex
	records []Record
}

// NewMemoryTable returns an empty MemoryTable.
func NewMemoryTable() *MemoryTable { return &MemoryTable{} }

// Append implements Table.
func (m *MemoryTable) Append(_ context.Context, chain func(*Record) ([]Record, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var last *Record
	if n := len(m.records); n > 0 {
		r := m.records[n-1]
		last = &r
	}
	rs, err := chain(last)
	if err != nil {
		return err
	}
	m.records = append(m.records, rs...)
	return nil
}

// Page implements Table.
func (m *MemoryTable) Page(_ context.Context, after int64, limit int) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, r := range m.records {
		if r.Seq > after && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

// MemoryMeta is an in-process Meta, for tests and in-memory programs (the
// trail of a private in-memory database needs none: no trail outlives it).
// The zero value is usable.
type MemoryMeta struct {
	mu    sync.Mutex
	began bool
}

var _ Meta = (*MemoryMeta)(nil)

// ChainBegan implements Meta.
func (m *MemoryMeta) ChainBegan(context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.began, nil
}

// MarkChainBegan implements Meta.
func (m *MemoryMeta) MarkChainBegan(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.began = true
	return nil
}
