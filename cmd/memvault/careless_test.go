package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The careless user's first hour (session 21): each test is a mistake a
// new user makes with the CLI, checked against what README.md promises.

// TestCarelessDSNPasswordNeverPrinted: a DSN with a typo is reported, and
// the report never carries the DSN's password. Each DSN here is one a
// careless user writes: libpq's "password = x" (white space around "=",
// which libpq and pgx accept), and a password given as a query option.
func TestCarelessDSNPasswordNeverPrinted(t *testing.T) {
	const pw = "hunter2secret"
	for _, dsn := range []string{
		// Redacted today; kept so a regression shows.
		"postgres://bob:" + pw + "@127.0.0.1:1/db?sslmode=disabel",
		"host=127.0.0.1 port=1 user=bob password=" + pw + " sslmode=nope",
		"postgres://127.0.0.1:1/db?password=" + pw + "&sslmode=nope",
		"redis://:" + pw + "@127.0.0.1:1/abc",
		// Printed today.
		"host=127.0.0.1 port=1 user=bob password = " + pw + " sslmode=nope",
		"redis://127.0.0.1:1/0?password=" + pw,
		"mongodb://bob@127.0.0.1:1/db?password=" + pw + "&authMechanism=BOGUS",
	} {
		for _, json := range []bool{false, true} {
			args := []string{"--dsn", dsn, "threads", "list"}
			if strings.HasPrefix(dsn, "host=") {
				// The bench connects with --dsn itself, not through
				// vault.Open: its pgx error quoted the DSN whole.
				args = []string{"--dsn", dsn, "bench", "checkpointer", "--duration", "1s"}
			}
			if json {
				args = append([]string{"--json"}, args...)
			}
			r := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", args...)
			if r.code == 0 {
				t.Errorf("%q: exit 0 on a DSN with a typo", dsn)
			}
			if strings.Contains(r.stdout+r.stderr, pw) {
				t.Errorf("DSN password printed (--json %v):\nDSN %q\nstderr: %s", json, dsn, r.stderr)
			}
		}
	}
}

// TestCarelessRedisDownErrorIsOneLine: README's CLI section promises
// "errors on stderr in one line". A Redis DSN whose server is down (the
// port is closed) must give one line, not go-redis's own log lines.
func TestCarelessRedisDownErrorIsOneLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dsn := "redis://127.0.0.1:" + strconv.Itoa(port) + "/0"
	r := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "--dsn", dsn, "threads", "list").must(t, 1)
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "memvault: ") {
		t.Fatalf("stderr has %d lines, want one \"memvault: …\" line:\n%s", len(lines), r.stderr)
	}
}

// subjectEnv is sqliteEnv with per-subject keys on and the database (and
// its key table) made.
func subjectEnv(t *testing.T) []string {
	env := append(sqliteEnv(t), "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:")
	cli(t, env, "", "migrate").must(t, 0)
	return env
}

// TestCarelessEmptySubjectIsUsage: README: exit code 2 is a usage error,
// "a bad flag or argument, an empty thread id, key or namespace label".
// An empty SUBJECT (a script's unset variable: `memvault forget "$USER_ID"`)
// is such an argument, as an empty thread id is.
func TestCarelessEmptySubjectIsUsage(t *testing.T) {
	env := subjectEnv(t)
	for _, args := range [][]string{
		{"forget", ""},
		{"keys", "readmit", ""},
		{"keys", "rotate-subject", ""},
	} {
		r := cli(t, env, "", args...)
		if r.code != 2 {
			t.Errorf("memvault %q: exit %d, want 2 (usage error); stderr: %s", args, r.code, r.stderr)
		}
	}
}

// TestCarelessNegativeForgetWait: `--wait -5s` is a bad flag value (as
// `threads sweep --idle-ttl -1h` is, exit 2). It must be refused before
// anything is destroyed, not run as an erasure that cannot wait and is
// left pending (exit 3) with the subject's keys destroyed.
func TestCarelessNegativeForgetWait(t *testing.T) {
	env := subjectEnv(t)
	r := cli(t, env, "", "forget", "--wait", "-5s", "alice")
	if r.code != 2 {
		t.Fatalf("forget --wait -5s: exit %d, want 2 (usage error)\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "erasure receipt") {
		t.Fatalf("forget --wait -5s ran an erasure:\n%s", r.stdout)
	}
}

// TestCarelessTypoDBMessageAsREADME: README's CLI section quotes the error
// of `memvault --db typo.db threads list` word for word ("fails with
// `vault: database not found: SQLite database file "typo.db" (--db)
// does not exist` and exit code 1, and creates nothing"; it said
// "config:", which the message never had). A user greps their logs for
// what the README shows.
func TestCarelessTypoDBMessageAsREADME(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "--db", filepath.Join(dir, "typo.db"), "threads", "list").must(t, 1)
	// It names --db, which the user gave (session 22: it said MEMVAULT_DB).
	want := `vault: database not found: SQLite database file "` + filepath.Join(dir, "typo.db") + `" (--db) does not exist`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not hold README's message\n got: %s\nwant: %s", r.stderr, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a missing database made %d files", len(entries))
	}
}

// TestCarelessBadArgumentIsUsage: README: exit 2 for "a bad flag or
// argument". A negative --ttl and an over-long namespace or key are exit 2
// today; an over-long or malformed --index path, a --filter with an
// unknown operator and a --prefix label with a dot are the same kind of
// mistake and must be too (a script tells "fix the call" from "retry").
func TestCarelessBadArgumentIsUsage(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "store", "put", "users", "alice", "k", `{"a":1}`).must(t, 0)
	long := strings.Repeat("Q", 600)
	for _, args := range [][]string{
		// exit 2 today, kept so a regression shows
		{"store", "put", "users", long, "k", `{}`},
		{"store", "put", "users", "alice", long, `{}`},
		{"store", "put", "--ttl", "-5m", "users", "alice", "k2", `{}`},
		// exit 1 today
		{"store", "put", "--index", long, "users", "alice", "k", `{"a":1}`},
		{"store", "put", "--index", "a[[", "users", "alice", "k", `{"a":1}`},
		{"store", "search", "users", "--filter", `{"a":{"$bogus":1}}`},
		{"store", "namespaces", "--prefix", "../.."},
	} {
		r := cli(t, env, "", args...)
		if r.code != 2 {
			t.Errorf("memvault %q: exit %d, want 2 (usage error); stderr: %s", args, r.code, r.stderr)
		}
	}
}

// TestCarelessKeyDSNPasswordNeverPrinted: the same for MEMVAULT_KEY_DSN,
// the key table's own database (per-subject keys on).
func TestCarelessKeyDSNPasswordNeverPrinted(t *testing.T) {
	const pw = "hunter2secret"
	env := sqliteEnv(t)
	env = append(env, "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:")
	cli(t, append(env, "MEMVAULT_KEY_TABLE="+filepath.Join(t.TempDir(), "k.db")), "", "migrate").must(t, 0)
	for _, kd := range []string{
		"postgres://bob:" + pw + "@127.0.0.1:1/db?sslmode=disabel", // redacted today
		"host=127.0.0.1 port=1 user=bob password = " + pw + " sslmode=nope",
	} {
		r := cli(t, append(env, "MEMVAULT_KEY_DSN="+kd), "", "threads", "list")
		if r.code == 0 {
			t.Errorf("%q: exit 0", kd)
		}
		if strings.Contains(r.stdout+r.stderr, pw) {
			t.Errorf("MEMVAULT_KEY_DSN password printed:\n%s", r.stderr)
		}
	}
}
