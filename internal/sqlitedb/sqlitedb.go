package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DriverName is the database/sql driver name of modernc.org/sqlite.
const DriverName = "sqlite"

// Memory is the path of a private in-memory database.
const Memory = ":memory:"

// Synchronous is SQLite's synchronous setting for a database Open makes.
type Synchronous int

const (
	// SyncNormal (the default) is durable against a crash of the process in
	// WAL mode; an operating-system crash or power loss can lose the last
	// transactions (never corrupt the file).
	SyncNormal Synchronous = iota
	// SyncFull syncs the WAL on every commit: durable against power loss.
	SyncFull
)

// Options tunes Open. The zero value is usable.
type Options struct {
	// Synchronous defaults to SyncNormal.
	Synchronous Synchronous
	// BusyTimeout is how long a connection waits for a lock held by another
	// process before failing with SQLITE_BUSY; 0 means 5 seconds.
	BusyTimeout time.Duration
	// MaxReaders caps the reader pool; 0 means max(4, GOMAXPROCS).
	MaxReaders int
	// NoMmap opens the file without SQLite's memory map (mmap_size 0):
	// every page is read into SQLite's page cache by a system call. A
	// database whose reads land on few, scattered pages of a large file
	// (store/sqlitestore's vectors) wants it: from a cold page cache a
	// fault in the map reads ahead around it (8 MiB on the test machine),
	// and a search touching pages all over the first 64 MiB read all of
	// them, 64 of the 117 MB its first search read, and kept them in the
	// process's resident memory. Like the other options, the first Open
	// of a file decides for every handle on it.
	NoMmap bool
}

// mmapSize is how much of the database file connections map into memory:
// reads of mapped pages need no system call and share the operating
// system's page cache between connections. It is kept small because every
// mapped page a process touches counts in its resident memory: with 256
// MiB, a store searching 100 000 × 1536-dim vectors (whose exact rescoring
// reads pages all over the file) grew to 266 MiB of mapped pages on top of
// its 90 MiB of heap. Pages beyond the mapping are read into SQLite's own
// page cache, a system call each.
const mmapSize = 64 << 20

// Errors.
var (
	// ErrClosed is returned by a handle used after Close.
	ErrClosed = errors.New("sqlitedb: closed")
	// ErrInvalidPath is returned for a path Open cannot use.
	ErrInvalidPath = errors.New("sqlitedb: invalid path")
)

// shared is one database: its pools and the writer semaphore, shared by every
// handle opened on the same file.
type shared struct {
	w, r      *sql.DB
	sem       chan struct{} // one in-process writer at a time
	immediate bool          // w's transactions BEGIN IMMEDIATE
	memory    bool          // a private in-memory database: no file
	owned     bool          // the pools were opened here and are closed here
	key       any           // registry key; nil when unregistered
	refs      int           // guarded by regMu
}

// DB is a handle on a shared database. Handles are safe for concurrent use;
// Close releases this handle only.
type DB struct {
	s      *shared
	mu     sync.Mutex
	closed bool
}

var (
	regMu    sync.Mutex
	registry = map[any]*shared{}
)

// Open returns a handle on the database file at path, creating the file if
// needed. Handles opened on the same file (by absolute path) share one pair
// of pools; opts of the first Open apply. path ":memory:" opens a private
// in-memory database.
func Open(path string, opts Options) (*DB, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("%w: %q (empty, or contains '?' or '#')", ErrInvalidPath, path)
	}
	if path == Memory {
		s, err := openMemory(opts)
		if err != nil {
			return nil, err
		}
		return &DB{s: s}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPath, err)
	}
	key := "file:" + abs
	regMu.Lock()
	defer regMu.Unlock()
	if s, ok := registry[key]; ok {
		s.refs++
		return &DB{s: s}, nil
	}
	s, err := openFile(abs, opts)
	if err != nil {
		return nil, err
	}
	s.key, s.refs = key, 1
	registry[key] = s
	return &DB{s: s}, nil
}

// Wrap returns a handle on a *sql.DB the caller opened (driver "sqlite")
// and keeps owning: Close of the last handle does not close db. Handles
// wrapping the same db share its writer semaphore. The caller chooses the
// pragmas; memvault recommends the DSN parameters
// "_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)".
// Write transactions take the write lock as they begin whatever the DSN's
// _txlock says.
func Wrap(db *sql.DB) *DB {
	regMu.Lock()
	defer regMu.Unlock()
	if s, ok := registry[db]; ok {
		s.refs++
		return &DB{s: s}
	}
	s := &shared{w: db, r: db, sem: make(chan struct{}, 1), key: db, refs: 1}
	registry[db] = s
	return &DB{s: s}
}

func busyMillis(opts Options) string {
	d := opts.BusyTimeout
	if d <= 0 {
		d = 5 * time.Second
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

func openFile(abs string, opts Options) (*shared, error) {
	syncMode := "NORMAL"
	if opts.Synchronous == SyncFull {
		syncMode = "FULL"
	}
	mmap := int64(mmapSize)
	if opts.NoMmap {
		mmap = 0
	}
	base := abs + "?_pragma=busy_timeout(" + busyMillis(opts) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(" + syncMode + ")" +
		"&_pragma=mmap_size(" + strconv.FormatInt(mmap, 10) + ")&_pragma=temp_store(MEMORY)" +
		// Deleted and overwritten content is zeroed in the file, so that a
		// re-encryption or a deletion does not leave the old ciphertext
		// (or plaintext) in free pages for whoever copies the file.
		"&_pragma=secure_delete(1)"
	createPrivate(abs)
	w, err := sql.Open(DriverName, base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlitedb: open %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	// The first connection creates the file and switches it to WAL.
	if err := w.PingContext(context.Background()); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlitedb: open %s: %w%s", abs, err, whyNotOpened(abs))
	}
	r, err := sql.Open(DriverName, base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlitedb: open %s: %w", abs, err)
	}
	n := opts.MaxReaders
	if n <= 0 {
		n = max(4, runtime.GOMAXPROCS(0))
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(5 * time.Minute)
	if err := r.PingContext(context.Background()); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("sqlitedb: open %s: %w", abs, err)
	}
	return &shared{w: w, r: r, sem: make(chan struct{}, 1), immediate: true, owned: true}, nil
}

// createPrivate creates the database file at abs, empty and readable by
// its owner only (0600, or less under the process's umask), when there is
// none: SQLite would create it 0644 under the usual umask 022, readable by
// every user of the machine, and it holds metadata in the clear, wrapped
// keys (the key table) or the audit trail. SQLite gives the -wal and -shm
// files it creates beside it the database file's mode. An existing file
// keeps the mode its owner gave it. Errors are left to SQLite's open,
// which reports them (see whyNotOpened).
func createPrivate(abs string) {
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
	}
}

// whyNotOpened says what the file system tells of a path SQLite could not
// open, for the cases SQLite reports only as "unable to open database
// file": a directory, or a file in a directory that does not exist
// (Open creates the file, never its directory).
func whyNotOpened(abs string) string {
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return " (it is a directory: give the path of a database file in it)"
	}
	dir := filepath.Dir(abs)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf(" (the directory %s does not exist: create it first)", dir)
	} else if err != nil {
		return fmt.Sprintf(" (%v)", err)
	}
	return ""
}

func openMemory(opts Options) (*shared, error) {
	db, err := sql.Open(DriverName, Memory+"?_pragma=busy_timeout("+busyMillis(opts)+")&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlitedb: open %s: %w", Memory, err)
	}
	// The database lives in its connection: keep exactly one, forever.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitedb: open %s: %w", Memory, err)
	}
	return &shared{w: db, r: db, sem: make(chan struct{}, 1), immediate: true, memory: true, owned: true, refs: 1}, nil
}

func (d *DB) get() (*shared, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	return d.s, nil
}

// Writer is the pool write transactions use. Do not hold its connection
// across calls: a database from Open has a single writer connection.
func (d *DB) Writer() *sql.DB { return d.s.w }

// Reader is the pool of read-only connections (the writer pool for
// ":memory:" and wrapped databases).
func (d *DB) Reader() *sql.DB { return d.s.r }

// Close releases the handle. The pools are closed when the last handle on
// an opened database is closed; a wrapped *sql.DB is never closed. Closing
// twice is a no-op.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()

	s := d.s
	regMu.Lock()
	s.refs--
	last := s.refs == 0
	if last && s.key != nil {
		delete(registry, s.key)
	}
	regMu.Unlock()
	if !last || !s.owned {
		return nil
	}
	err := s.r.Close()
	if s.w != s.r {
		if werr := s.w.Close(); err == nil {
			err = werr
		}
	}
	if err != nil {
		return fmt.Errorf("sqlitedb: close: %w", err)
	}
	return nil
}
