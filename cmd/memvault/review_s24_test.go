package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewS24CensusWithKeyMarksPlaintextDatabase (session 24 review):
// `keys census` is read-only ("decrypts nothing") and skips the key check;
// `keys reencrypt --dry-run` "only counts the rows". Run by an operator
// whose shell exports LANGGRAPH_AES_KEY (README's way to evaluate a
// migration, with MEMVAULT_ALLOW_PLAINTEXT=true for the dry run) on a
// plaintext database, their Open writes the values_sealed mark all the
// same (requireKeyOnKeyedDatabase marks on any keyed Open, the key check
// skipped or not), and from then on every keyless process of that
// plaintext deployment is refused at Open with ErrKeyNotLoaded ("a
// process with a key has written to it: its values are encrypted" — none
// is) until someone deletes the row by hand, which the message does not
// say.
func TestReviewS24CensusWithKeyMarksPlaintextDatabase(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"census", nil, []string{"keys", "census"}},
		{"reencrypt-dry-run", []string{"MEMVAULT_ALLOW_PLAINTEXT=true"}, []string{"keys", "reencrypt", "--dry-run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "plain.db")
			plain := []string{"MEMVAULT_DB=" + db}
			cli(t, plain, "", "threads", "import", writeLines(t, chainExport(t, "p", 2))).must(t, 0)
			cli(t, plain, "", "threads", "list").must(t, 0)

			keyed := append(append([]string{"LANGGRAPH_AES_KEY=" + testKey}, plain...), tc.env...)
			r := cli(t, keyed, "", tc.args...)
			t.Logf("%s with a key exported: exit %d, %q", strings.Join(tc.args, " "), r.code, strings.TrimSpace(r.stdout+r.stderr))

			r = cli(t, plain, "", "threads", "list")
			if r.code != 0 {
				t.Fatalf("after a read-only `memvault %s` run with LANGGRAPH_AES_KEY exported, the keyless plaintext deployment is refused: threads list exit %d, %q",
					strings.Join(tc.args, " "), r.code, strings.TrimSpace(r.stderr))
			}
		})
	}
}

// TestReviewS24RedisPasswordPrefixPrinted (session 24 review): a Redis URL
// whose password holds an unescaped "#", "/" or "?" (generated passwords
// do) is refused by net/url, whose message quotes the URL up to that
// character only ("invalid port \":s3cretpart\" after host"). dsnSecrets
// takes the whole userinfo password of a URL net/url refuses
// ("s3cretpart#tailsecret") and its space-separated pieces, so the part
// before the delimiter is printed on stderr (PostgreSQL's and MongoDB's
// drivers parse these themselves and print nothing of it).
func TestReviewS24RedisPasswordPrefixPrinted(t *testing.T) {
	for _, sep := range []string{"#", "/", "?"} {
		dsn := "redis://:s3cretpart" + sep + "tailsecret@127.0.0.1:1/0"
		r := cli(t, []string{"MEMVAULT_DSN=" + dsn, "LANGGRAPH_AES_KEY=" + testKey}, "", "threads", "list")
		if r.code == 0 {
			t.Fatalf("%s: exit 0", dsn)
		}
		if strings.Contains(r.stderr, "s3cretpart") || strings.Contains(r.stderr, "tailsecret") {
			t.Errorf("MEMVAULT_DSN=%s: the password's part before %q is printed: %q", dsn, sep, strings.TrimSpace(r.stderr))
		}
	}
}

// TestReviewS24ListToFullDiskExitsZero (session 24 review): a command
// whose output cannot be written must fail, as `store get`, `keys census`
// and `threads export` do ("write /dev/stdout: no space left on device",
// exit 1). `threads list`, `store list`, `store namespaces` and `store
// search` write through a tabwriter whose errors they drop: with stdout on
// a full disk (or a closed pipe's EPIPE ignored) they exit 0 having written
// nothing — a script saving the listing believes it has it.
func TestReviewS24ListToFullDiskExitsZero(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	env := sqliteEnv(t)
	cli(t, env, "", "threads", "import", writeLines(t, chainExport(t, "listed", 2))).must(t, 0)
	cli(t, env, "", "store", "put", "ns", "k", `{"a":1}`).must(t, 0)
	for _, args := range [][]string{
		{"store", "get", "ns", "k"}, // fails: the reference
		{"threads", "list"},
		{"store", "list", "ns"},
		{"store", "namespaces"},
		{"store", "search", "ns"},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
		var se bytes.Buffer
		cmd.Stdout, cmd.Stderr = full, &se
		err := cmd.Run()
		if err == nil {
			t.Errorf("memvault %s > /dev/full: exit 0 (stderr %q): its output was lost without an error", strings.Join(args, " "), se.String())
		}
	}
}

// TestReviewS24DSNInPathSettingPrinted (session 24 review): MEMVAULT_KEY_TABLE
// (a SQLite file, or a schema) and MEMVAULT_KEY_DSN (a server) are one
// word apart, as are MEMVAULT_DB (a SQLite file) and MEMVAULT_DSN, and
// --db and --dsn. A connection string put in the path setting is taken as
// a file path: the error that it cannot be opened prints it whole,
// password included (the CLI scrubs MEMVAULT_DSN, DATABASE_URL,
// MEMVAULT_KEY_DSN and --dsn only), and a libpq keyword/value string —
// which holds no "/" — is a valid file name: `--db 'host=… password=…'
// migrate` creates a SQLite database of that name in the working
// directory and exits 0, the password now in a file name. Nothing says
// the value looks like a DSN.
func TestReviewS24DSNInPathSettingPrinted(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"MEMVAULT_KEY_TABLE", []string{"MEMVAULT_DB=" + filepath.Join(t.TempDir(), "m.db"), "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:",
			"MEMVAULT_KEY_TABLE=postgres://keys:s3cretpart@keys.example:5432/keys"}, []string{"migrate"}},
		{"MEMVAULT_DB", []string{"MEMVAULT_DB=postgres://app:s3cretpart@db.example:5432/app"}, []string{"migrate"}},
		{"--db", nil, []string{"--db", "host=db.example user=app password=s3cretpart dbname=app", "migrate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(binary, tc.args...)
			cmd.Dir = dir // where a relative path lands
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANGGRAPH_AES_KEY=" + testKey}, tc.env...)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			made, _ := filepath.Glob(filepath.Join(dir, "*"))
			if strings.Contains(se.String(), "s3cretpart") || err == nil {
				t.Fatalf("a DSN set in %s by mistake: exit error %v, files made %q, stderr %q", tc.name, err, made, strings.TrimSpace(se.String()))
			}
		})
	}
}
