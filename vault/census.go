package vault

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/internal/aead"

	"github.com/jackc/pgx/v5"
)

// CensusRow counts the stored values of one table under one cipher and key.
type CensusRow struct {
	// Table is checkpoint_blobs, checkpoint_writes or store.
	Table string `json:"table"`
	// Cipher is the value's cipher ("mvgcm", "aes"), or "" for plaintext.
	Cipher string `json:"cipher"`
	// KeyID is the envelope's key id ("" for aes, which records none, and
	// for plaintext); Role says whether it is the primary key, a previous
	// one, or unknown to the configured keys.
	KeyID string `json:"key_id"`
	Role  string `json:"role"`
	// Rows is how many values.
	Rows int64 `json:"rows"`
}

// Census counts the stored values of every table by cipher and key id,
// from SQL alone: it decrypts nothing, so it runs without the previous
// keys and proves, before a key is retired, that no row still needs it.
// The key id is read from the envelope's header (crypto/doc.go: bytes 1–8);
// "aes" rows carry none.
func (h *Handle) Census(ctx context.Context) ([]CensusRow, error) {
	var raw []CensusRow
	var err error
	switch h.Backend {
	case config.BackendSQLite:
		raw, err = h.sqliteCensus(ctx)
	case config.BackendPostgres:
		raw, err = h.postgresCensus(ctx)
	default:
		return nil, h.unsupported("the key census (`memvault keys census`)")
	}
	if err != nil {
		return nil, fmt.Errorf("vault: census: %w", err)
	}
	merged := map[[3]string]int64{} // rows that name the same key
	for _, r := range raw {
		merged[[3]string{r.Table, r.Cipher, strings.ToLower(r.KeyID)}] += r.Rows
	}
	out := make([]CensusRow, 0, len(merged))
	for k, n := range merged {
		out = append(out, CensusRow{Table: k[0], Cipher: k[1], KeyID: k[2], Role: h.keyRole(k[1], k[2]), Rows: n})
	}
	slices.SortFunc(out, func(a, b CensusRow) int {
		return strings.Compare(a.Table+"\x00"+a.Cipher+"\x00"+a.KeyID, b.Table+"\x00"+b.Cipher+"\x00"+b.KeyID)
	})
	return out, nil
}

// keyRole names the role of a key id among the configured keys.
func (h *Handle) keyRole(cipher, id string) string {
	switch {
	case cipher == "":
		return "plaintext"
	case id == "":
		return "unbound (no key id)"
	case h.Keyring == nil:
		return "unknown"
	}
	for i, k := range h.Keyring.Keys() {
		if k.ID().String() == id {
			if i == 0 {
				return "primary"
			}
			return "previous"
		}
	}
	return "unknown"
}

func (h *Handle) sqliteCensus(ctx context.Context) ([]CensusRow, error) {
	db, err := sql.Open("sqlite", "file:"+h.dbPath+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	const blobCols = `CASE WHEN instr(type, '+') > 0 THEN substr(type, instr(type, '+') + 1) ELSE '' END,
CASE WHEN type LIKE '%+` + aead.EnvelopeName + `' THEN lower(hex(substr(blob, 2, ` + "8" + `))) ELSE '' END`
	queries := []struct{ table, q string }{
		{"checkpoint_blobs", `SELECT ` + blobCols + `, count(*) FROM checkpoint_blobs WHERE type <> 'empty' GROUP BY 1, 2`},
		{"checkpoint_writes", `SELECT ` + blobCols + `, count(*) FROM checkpoint_writes GROUP BY 1, 2`},
		{"store", `SELECT CASE WHEN json_valid(value) AND json_type(value, '$.__memvault_enc__') IS NOT NULL THEN json_extract(value, '$.t') ELSE '' END,
CASE WHEN json_valid(value) AND json_type(value, '$.__memvault_enc__') IS NOT NULL THEN substr(json_extract(value, '$.d'), 1, 12) ELSE '' END, count(*) FROM store GROUP BY 1, 2`},
	}
	var out []CensusRow
	for _, q := range queries {
		rows, err := db.QueryContext(ctx, q.q)
		if err != nil {
			if strings.Contains(err.Error(), "no such table") {
				continue
			}
			return nil, fmt.Errorf("%s: %w", q.table, err)
		}
		out, err = appendCensus(out, q.table, rows.Next, rows.Scan, rows.Err)
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (h *Handle) postgresCensus(ctx context.Context) ([]CensusRow, error) {
	ident := func(t string) string {
		if h.schema == "" {
			return t
		}
		return pgx.Identifier{h.schema, t}.Sanitize()
	}
	const blobCols = `split_part(type, '+', 2),
CASE WHEN type LIKE '%+` + aead.EnvelopeName + `' THEN encode(substring(blob from 2 for 8), 'hex') ELSE '' END`
	queries := []struct{ table, q string }{
		{"checkpoint_blobs", `SELECT ` + blobCols + `, count(*) FROM ` + ident("checkpoint_blobs") + ` WHERE type <> 'empty' GROUP BY 1, 2`},
		{"checkpoint_writes", `SELECT ` + blobCols + `, count(*) FROM ` + ident("checkpoint_writes") + ` GROUP BY 1, 2`},
		{"store", `SELECT CASE WHEN jsonb_typeof(value) = 'object' AND value ? '__memvault_enc__' THEN coalesce(value->>'t', '') ELSE '' END,
CASE WHEN jsonb_typeof(value) = 'object' AND value ? '__memvault_enc__' THEN substr(coalesce(value->>'d', ''), 1, 12) ELSE '' END, count(*) FROM ` + ident("store") + ` GROUP BY 1, 2`},
	}
	var out []CensusRow
	for _, q := range queries {
		rows, err := h.Pool.Query(ctx, q.q)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.table, err)
		}
		out, err = appendCensus(out, q.table, rows.Next, rows.Scan, rows.Err)
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// appendCensus reads the (a, b, count) rows of one table's census query,
// whichever driver's rows next, scan and rowsErr belong to.
func appendCensus(out []CensusRow, table string, next func() bool, scan func(...any) error, rowsErr func() error) ([]CensusRow, error) {
	for next() {
		var a, b string
		var n int64
		if err := scan(&a, &b, &n); err != nil {
			return out, fmt.Errorf("%s: %w", table, err)
		}
		out = append(out, censusRow(table, a, b, n))
	}
	if err := rowsErr(); err != nil {
		return out, fmt.Errorf("%s: %w", table, err)
	}
	return out, nil
}

// censusRow builds a row from a blob table's (cipher, hex key id) or the
// store's (type tag, base64 prefix).
func censusRow(table, a, b string, n int64) CensusRow {
	if table != "store" {
		return CensusRow{Table: table, Cipher: a, KeyID: b, Rows: n}
	}
	_, cipher, _ := strings.Cut(a, "+")
	return CensusRow{Table: table, Cipher: cipher, KeyID: storeKeyID(cipher, b), Rows: n}
}

// storeKeyID is the key id of a sealed store value of cipher whose
// base64 ("d") starts with b64: its first 12 characters are the
// envelope's first 9 bytes, version and key id. "" for other ciphers.
func storeKeyID(cipher, b64 string) string {
	if cipher != aead.EnvelopeName || len(b64) < 12 {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(b64[:12])
	if err != nil || len(raw) != 9 {
		return ""
	}
	return hex.EncodeToString(raw[1:9])
}

// DangerousCompact rewrites the database files so that the space rows left
// behind (old ciphertexts a re-encryption replaced, deleted rows) is
// returned and no longer holds their bytes: on SQLite, VACUUM then
// emptying the write-ahead log (sqlitedb.DB.Compact: it needs free disk
// space the size of the database, and fails wrapping sqlitedb.ErrWALBusy
// while a reader of another process holds the log); VACUUM FULL of
// checkpoint_blobs, checkpoint_writes, store and store_vectors on
// PostgreSQL, which holds an ACCESS EXCLUSIVE lock on each table while it
// is rewritten: every reader and writer of that table waits. Backups,
// replicas and WAL archives keep what they hold.
func (h *Handle) DangerousCompact(ctx context.Context) ([]string, error) {
	switch h.Backend {
	case config.BackendSQLite:
		if err := h.compactSQLite(ctx); err != nil {
			return nil, fmt.Errorf("vault: compact: %w", err)
		}
		return []string{h.dbPath}, nil
	case config.BackendPostgres:
		var done []string
		for _, t := range []string{"checkpoint_blobs", "checkpoint_writes", "store", "store_vectors"} {
			name := t
			if h.schema != "" {
				name = pgx.Identifier{h.schema, t}.Sanitize()
			}
			var exists bool
			if err := h.Pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil {
				return done, fmt.Errorf("vault: compact: %w", err)
			}
			if !exists {
				continue
			}
			if _, err := h.Pool.Exec(ctx, `VACUUM FULL `+name); err != nil {
				return done, fmt.Errorf("vault: compact %s: %w", name, err)
			}
			done = append(done, name)
		}
		return done, nil
	}
	return nil, h.unsupported("compaction")
}
