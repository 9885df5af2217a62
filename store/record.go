package store

import (
	"context"
	"strings"
)

// RecordRow is an audit record that a write inserts in its own
// transaction (audit.Store, when the trail lives in the store's database):
// the row of Table, one value per column, in the storage's own types. The
// record and the write commit together or not at all: one commit for
// both, and a write that fails leaves no record.
type RecordRow struct {
	Table   string // quoted as the storage needs it
	Columns []string
	Values  []any
}

type recordKey struct{}

// WithRecord returns ctx carrying r, the audit record of the write
// (Put, Delete, PutIf) made with it. A store whose RecordsInTx reports
// true inserts it in the write's transaction; a write that carries one
// to a store that cannot fails rather than go unrecorded.
func WithRecord(ctx context.Context, r *RecordRow) context.Context {
	return WithRecords(ctx, []*RecordRow{r})
}

// WithRecords is WithRecord for a Batch that writes: the records of
// every op of the batch, inserted in its transaction.
func WithRecords(ctx context.Context, rs []*RecordRow) context.Context {
	return context.WithValue(ctx, recordKey{}, rs)
}

// RecordsOf returns the records WithRecord or WithRecords put in ctx, or
// none.
func RecordsOf(ctx context.Context) []*RecordRow {
	rs, _ := ctx.Value(recordKey{}).([]*RecordRow)
	return rs
}

// TxRecorder is a store that inserts an audit record (WithRecord) in its
// writes' transactions.
type TxRecorder interface {
	// RecordsInTx reports whether it does (its driver declares
	// DriverCaps.TxRecords).
	RecordsInTx() bool
}

// InsertSQL is the INSERT of r's row into its table, with param(i) the
// placeholder of the i-th value (0-based): "?" for SQLite, "$n" for
// PostgreSQL.
func (r *RecordRow) InsertSQL(param func(i int) string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + r.Table + " (")
	for i, c := range r.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"` + strings.ReplaceAll(c, `"`, `""`) + `"`)
	}
	b.WriteString(") VALUES (")
	for i := range r.Values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(param(i))
	}
	b.WriteString(")")
	return b.String()
}
