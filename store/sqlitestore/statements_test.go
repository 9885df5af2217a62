package sqlitestore_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
	"github.com/memvault/memvault/store/storetest"
)

// stmtLog is a database/sql driver over modernc.org/sqlite's that records
// the text of every statement its connections prepare. It implements no
// direct Query or Exec, so database/sql prepares every statement that is
// not already prepared: each run of an unprepared statement is a line,
// and a prepared one is a line per connection.
type stmtLog struct {
	driver.Driver
	mu   sync.Mutex
	stmt []string
}

func (l *stmtLog) Open(name string) (driver.Conn, error) {
	c, err := l.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, log: l}, nil
}

// count returns how many recorded statements contain s.
func (l *stmtLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, q := range l.stmt {
		if strings.Contains(q, s) {
			n++
		}
	}
	return n
}

type loggedConn struct {
	driver.Conn
	log *stmtLog
}

func (c *loggedConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c *loggedConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.log.mu.Lock()
	c.log.stmt = append(c.log.stmt, q)
	c.log.mu.Unlock()
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (c *loggedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *loggedConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// TestIndexedPutsCountNoCodes: an indexed put of a store whose codes are
// not centred yet (fewer than 1 024 items have codes) decides whether to
// centre them from the coverage its transaction keeps, not by counting
// every code row (SELECT count(*) FROM store_vector_codes, a pass over the
// codes on every put).
func TestIndexedPutsCountNoCodes(t *testing.T) {
	ctx := context.Background()
	base, err := sql.Open("sqlite", "")
	if err != nil {
		t.Fatal(err)
	}
	log := &stmtLog{Driver: base.Driver()}
	_ = base.Close()
	name := fmt.Sprintf("sqlite-log-%p", log)
	sql.Register(name, log)
	db, err := sql.Open(name, filepath.Join(t.TempDir(), "count.db")+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	idx := &store.IndexConfig{Embedder: storetest.NewAxisEmbedder(storetest.Vocabulary...)}
	s, err := sqlitestore.New(ctx, db, sqlitestore.Options{Index: idx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	const puts = 20
	before := log.count("count(*) FROM store_vector_codes")
	for i := range puts {
		if err := s.Put(ctx, store.Namespace{"n"}, fmt.Sprint(i), map[string]any{"t": storetest.Vocabulary[i%len(storetest.Vocabulary)]}); err != nil {
			t.Fatal(err)
		}
	}
	if n := log.count("count(*) FROM store_vector_codes") - before; n != 0 {
		t.Fatalf("%d indexed puts counted the code rows %d times, want 0", puts, n)
	}
	// The puts were indexed (the log sees statements at all).
	if log.count("store_vector_codes") == 0 {
		t.Fatal("no statement on store_vector_codes recorded")
	}
	res, err := s.Search(ctx, store.Namespace{"n"}, store.SearchOptions{Query: storetest.Vocabulary[0], Limit: 1})
	if err != nil || len(res) != 1 {
		t.Fatalf("search: %v, %d results", err, len(res))
	}
}
