// Package mongotest runs a real MongoDB-protocol server for tests and
// examples: FerretDB v1.24.2, embedded in the test process, listening on a
// loopback port, with its SQLite backend in a temporary directory. No
// mongod can be had on the machines memvault is built on, and FerretDB is
// a Go module, so every `go test` gets a real server with nothing to
// install. It is the MongoDB counterpart of memvaulttest/pgtest.
//
// FerretDB v1 lacks multi-document transactions, change streams, TTL
// indexes and $vectorSearch, and returns 0 for the second of two $sum
// accumulators in one $group: code tested here must not rely on them.
//
// Use Main from a package's TestMain and Database in each test; Start is
// for runnable examples and programs.
package mongotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ErrStart is wrapped by the error of a server that did not start.
var ErrStart = errors.New("mongotest: FerretDB did not start")

// Server is a running FerretDB.
type Server struct {
	// URI is the server's mongodb:// URI (loopback, no credentials).
	URI string

	cancel context.CancelFunc
	done   chan struct{}
	dir    string
}

// Start starts FerretDB with its SQLite backend in a new temporary
// directory, on a free loopback port. Stop it with Stop, which removes the
// directory.
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "memvault-ferretdb-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler:  "sqlite",
		// Test data is thrown away: no fsync (FerretDB adds WAL and a
		// busy timeout itself).
		SQLiteURL: "file:" + dir + "/?_pragma=synchronous(off)",
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cancel: cancel, done: make(chan struct{}), dir: dir}
	go func() {
		defer close(s.done)
		_ = f.Run(ctx)
	}()
	// MongoDBURI knows the port once Run has bound the listener.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if s.URI = f.MongoDBURI(); s.URI != "" && !hasZeroPort(s.URI) {
			break
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("%w: no listening address after 30s", ErrStart)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s, nil
}

func hasZeroPort(uri string) bool {
	for i := len(uri) - 1; i > 0; i-- {
		if uri[i] == ':' {
			return len(uri) > i+1 && uri[i+1] == '0' && (len(uri) == i+2 || uri[i+2] == '/')
		}
	}
	return false
}

// Stop stops the server and removes its data.
func (s *Server) Stop() {
	s.cancel()
	<-s.done
	_ = os.RemoveAll(s.dir)
}

var (
	mu     sync.Mutex
	shared *Server
)

// Main runs a package's tests with one shared server, started on first
// use by Database and stopped when the tests end. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	if shared != nil {
		shared.Stop()
	}
	mu.Unlock()
	os.Exit(code)
}

// URI returns the shared server's URI, starting it on first use (see
// Main, which stops it).
func URI(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if shared == nil {
		s, err := Start()
		if err != nil {
			t.Fatal(err)
		}
		shared = s
	}
	return shared.URI
}

// Database returns a new, empty database of its own on the shared server
// (a random name), with a client closed and the database dropped when t
// ends.
func Database(t testing.TB) *mongo.Database {
	t.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI(URI(t)))
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := client.Database("t" + hex.EncodeToString(b[:]))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = db.Drop(ctx)
		_ = client.Disconnect(ctx)
	})
	return db
}
