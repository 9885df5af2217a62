// Command ferretsrv is the test server mongotest starts in a process of
// its own: FerretDB v1.24.2 with its SQLite backend in -dir (or, with
// -postgresql-url, its PostgreSQL backend in that database), listening on
// a free loopback port (or -listen). It prints its mongodb:// URI on the
// first line of standard output and runs until its standard input closes,
// so it never outlives the test process that started it, however that
// process ends.
//
// The SQLite backend pushes no filter but one on _id down to SQLite: every
// other query and upsert decodes every document of the collection in Go,
// so an operation costs in proportion to the collection (100+ ms at a few
// thousand checkpoints). The PostgreSQL backend sends equality filters on
// top-level fields to PostgreSQL, which is what scripts/bench-mongo.sh
// uses to measure clients rather than the server.
//
// It runs apart from the tests so that `go test -race` does not
// instrument FerretDB and its SQLite, which made a conformance run take
// longer than forty minutes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	dir := flag.String("dir", "", "directory of the SQLite backend's files")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL database of the PostgreSQL backend (instead of -dir)")
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on")
	flag.Parse()
	if (*dir == "") == (*pgURL == "") {
		fmt.Fprintln(os.Stderr, "ferretsrv: one of -dir and -postgresql-url is required")
		os.Exit(2)
	}
	cfg := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listen},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler:  "sqlite",
		// Test data is thrown away: no fsync (FerretDB adds WAL and a
		// busy timeout itself).
		SQLiteURL: "file:" + *dir + "/?_pragma=synchronous(off)",
	}
	if *pgURL != "" {
		cfg.Handler, cfg.SQLiteURL, cfg.PostgreSQLURL = "postgresql", "", *pgURL
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretsrv:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(ctx)
	}()
	// MongoDBURI knows the port once Run has bound the listener.
	deadline := time.Now().Add(30 * time.Second)
	uri := ""
	for uri == "" || strings.Contains(uri, ":0/") {
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "ferretsrv: no listening address after 30s")
			os.Exit(1)
		}
		time.Sleep(5 * time.Millisecond)
		uri = f.MongoDBURI()
	}
	fmt.Println(uri)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it, or dies
	cancel()
	<-done
}
