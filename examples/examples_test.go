// Package examples_test builds every example and runs it as its own process,
// checking the lines a reader is told to expect. The PostgreSQL examples run
// against the pgtest cluster, each in a schema of its own.
package examples_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/internal/aead"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// runTimeout bounds one run of an example; they take seconds.
const runTimeout = 2 * time.Minute

// build compiles the example in directory name into the test's temporary
// directory and returns the binary's path.
func build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	args := append([]string{"build", "-o", bin}, raceFlags...)
	cmd := exec.Command("go", append(args, "./"+name)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", name, err, out)
	}
	return bin
}

// run runs bin with a clean memvault environment plus env, and returns its
// standard output, standard error and exit code.
func run(t *testing.T, bin string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("run %s: %v", filepath.Base(bin), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), runTimeout, &out, &errOut)
	}
	return out.String(), errOut.String(), code
}

// mustRun is run for a run that must succeed.
func mustRun(t *testing.T, bin string, env ...string) string {
	t.Helper()
	out, errOut, code := run(t, bin, env...)
	if code != 0 {
		t.Fatalf("%s exited with %d\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), code, out, errOut)
	}
	t.Logf("%s output:\n%s", filepath.Base(bin), out)
	return out
}

// cleanEnv is the test's environment without the variables that configure
// memvault, so the examples see only what a test gives them.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "MEMVAULT_") || strings.HasPrefix(name, "LANGGRAPH_") ||
			strings.HasPrefix(name, "OPENAI_") || name == "DATABASE_URL" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// wantLines checks that out contains every line of want, in order (other
// lines may come between).
func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w+"\n")
		if i < 0 || (i > 0 && rest[i-1] != '\n') {
			t.Fatalf("output lacks the line %q (after the previous ones); output:\n%s", w, out)
		}
		rest = rest[i+len(w)+1:]
	}
}

// wantMatch checks that out has a line matching pattern and returns its
// submatches.
func wantMatch(t *testing.T, out, pattern string) []string {
	t.Helper()
	m := regexp.MustCompile("(?m)^" + pattern + "$").FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output has no line matching %q; output:\n%s", pattern, out)
	}
	return m
}

func TestQuickstart(t *testing.T) {
	bin := build(t, "quickstart")
	t.Run("temp", func(t *testing.T) {
		out := mustRun(t, bin)
		wantLines(t, out,
			`latest checkpoint (step 1): ["user: my parcel is late" "agent: sorry! which order is it?"]`)
		wantMatch(t, out, `recalled contact: "prefers email, never phone calls" \(score 0\.\d\d\)`)
	})
	t.Run("MEMVAULT_DB", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "kept.db")
		out := mustRun(t, bin, "MEMVAULT_DB="+db)
		wantMatch(t, out, `recalled contact: .*`)
		if _, err := os.Stat(db); err != nil {
			t.Fatalf("MEMVAULT_DB was not used: %v", err)
		}
	})
	// An exported key seals what the quick start stores (it read no
	// environment but MEMVAULT_DB before, and wrote plaintext).
	t.Run("LANGGRAPH_AES_KEY", func(t *testing.T) {
		dir := t.TempDir()
		out := mustRun(t, bin, "MEMVAULT_DB="+filepath.Join(dir, "kept.db"), "LANGGRAPH_AES_KEY=0123456789abcdef0123456789abcdef")
		wantMatch(t, out, `recalled contact: "prefers email, never phone calls" \(score 0\.\d\d\)`)
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			t.Fatalf("no database files: %v", err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("never phone calls")) || bytes.Contains(b, []byte("parcel is late")) {
				t.Fatalf("%s holds the quick start's words in clear", e.Name())
			}
		}
	})
}

func TestTimeTravel(t *testing.T) {
	out := mustRun(t, build(t, "time-travel"))
	wantLines(t, out, "history of trip-7:", "forking from step 0 ("+
		wantMatch(t, out, `  step  0  (\S+)  Lisbon, 2 nights`)[1]+")")
	wantMatch(t, out, `  step -1  \S+  planning`)

	// Both branches share the input and step 0 checkpoints, then differ.
	branch := func(title string) []string {
		i := strings.Index(out, title+": ")
		if i < 0 {
			t.Fatalf("no branch %q in output:\n%s", title, out)
		}
		lines := strings.Split(out[i:], "\n")[1:]
		var ids []string
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) != 4 || f[0] != "step" {
				break
			}
			ids = append(ids, f[3])
		}
		return ids
	}
	wantLines(t, out, "latest (the fork): Porto, 3 nights, booked")
	wantLines(t, out, "original branch  : Lisbon, 2 nights, booked")
	fork, orig := branch("latest (the fork)"), branch("original branch  ")
	if len(fork) != 4 || len(orig) != 3 {
		t.Fatalf("branch lengths %d and %d, want 4 and 3; output:\n%s", len(fork), len(orig), out)
	}
	if fork[0] != orig[0] || fork[1] != orig[1] || fork[2] == orig[2] {
		t.Fatalf("branches should share two checkpoints and then differ: fork %v, original %v", fork, orig)
	}
}

func TestKeyRotation(t *testing.T) {
	bin := build(t, "key-rotation")
	check := func(t *testing.T, out string) {
		t.Helper()
		wantMatch(t, out, `1\. writing under key A \(id [0-9a-f]{16}\)`)
		wantMatch(t, out, `2\. primary key B \(id [0-9a-f]{16}\), previous key A`)
		wantLines(t, out,
			"   re-encrypted under key B: checkpoint values 1, memories 1",
			`3. key B alone reads: messages ["my card number ends in 4242"], memory "prefers email"`)
		wantMatch(t, out, `4\. key A alone: vault: the database holds data under a key that is not loaded: its values are encrypted under key [0-9a-f]{16}, and the loaded keys are [0-9a-f]{16}: .*`)
		if a, b := wantMatch(t, out, `1\. .*id (\w+)\)`)[1], wantMatch(t, out, `2\. .*id (\w+)\).*`)[1]; a == b {
			t.Fatalf("keys A and B have the same id %s", a)
		}
	}
	t.Run("sqlite", func(t *testing.T) { check(t, mustRun(t, bin)) })
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.SchemaDSN(t)
		check(t, mustRun(t, bin, "MEMVAULT_DSN="+dsn))
		// The example cleans up after itself, so it runs again on the same
		// database.
		check(t, mustRun(t, bin, "MEMVAULT_DSN="+dsn))
	})
}

func TestPostgres(t *testing.T) {
	bin := build(t, "postgres")
	t.Run("no DSN", func(t *testing.T) {
		out, errOut, code := run(t, bin)
		if code != 2 || out != "" || !strings.Contains(errOut, "set MEMVAULT_DSN") {
			t.Fatalf("without MEMVAULT_DSN: exit %d, stdout %q, stderr %q; want 2 and a hint on stderr", code, out, errOut)
		}
	})
	t.Run("transactions", func(t *testing.T) {
		dsn := pgtest.SchemaDSN(t)
		check := func(out string) {
			t.Helper()
			wantLines(t, out,
				"transaction 1: ticket, checkpoint and memory committed",
				"  tickets rows: 1",
				`  checkpoint:   ["alice: parcel is late"]`)
			wantMatch(t, out, `  memory:       "prefers email, never phone calls" \(semantic search, score \S+\)`)
			wantLines(t, out,
				"  stored as:    json+mvgcm (ciphertext in checkpoint_blobs.blob)",
				"transaction 2: ticket, checkpoint and memory rolled back",
				"  tickets rows: 0",
				"  checkpoint:   none",
				"  memory:       none")
		}
		out := mustRun(t, bin, "MEMVAULT_DSN="+dsn)
		wantLines(t, out, "LANGGRAPH_AES_KEY is unset: encrypting with a random key made for this run")
		check(out)
		// Again, with a configured key, on the tables of the first run.
		out = mustRun(t, bin, "MEMVAULT_DSN="+dsn, "LANGGRAPH_AES_KEY=0123456789abcdef0123456789abcdef")
		if strings.Contains(out, "unset") {
			t.Fatalf("LANGGRAPH_AES_KEY was ignored:\n%s", out)
		}
		check(out)

		// Seen from outside: two committed tickets (one per run), each with
		// its checkpoint; nothing of the rolled-back ones.
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var tickets, withCheckpoint, memories int
		err = conn.QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM tickets),
			(SELECT count(*) FROM tickets t WHERE EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = t.thread_id)),
			(SELECT count(*) FROM store)`).Scan(&tickets, &withCheckpoint, &memories)
		if err != nil {
			t.Fatal(err)
		}
		if tickets != 2 || withCheckpoint != 2 || memories != 1 {
			t.Fatalf("tickets %d, with checkpoint %d, memories %d; want 2, 2, 1 (alice's memory is replaced)", tickets, withCheckpoint, memories)
		}
	})
}

func TestSharedWithPython(t *testing.T) {
	bin := build(t, "shared-with-python")
	const key = "0123456789abcdef0123456789abcdef" // 32 characters: AES-256, as Python reads it
	check := func(t *testing.T, out, backend string) {
		t.Helper()
		wantMatch(t, out, `wrote checkpoint [0-9a-f-]{36} of thread "shared-with-python" \(`+backend+`\)`)
		wantMatch(t, out, `checkpoint_blobs  messages  type json\+aes  nonce [0-9a-f]{8}… \| tag [0-9a-f]{8}… \| ciphertext 49 bytes`)
		wantMatch(t, out, `checkpoint_blobs  order     type json\+aes  nonce [0-9a-f]{8}… \| tag [0-9a-f]{8}… \| ciphertext 27 bytes`)
		wantMatch(t, out, `checkpoint_writes messages  type json\+aes  nonce [0-9a-f]{8}… \| tag [0-9a-f]{8}… \| ciphertext 46 bytes`)
		wantLines(t, out, `decrypted with crypto/aes and the raw key alone: {"id":1234,"status":"late"}`)
		wantMatch(t, out, `    serde = EncryptedSerializer\.from_pycryptodome_aes\(mode=AES\.MODE_GCM\)  # key: LANGGRAPH_AES_KEY`)
	}
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "shared.db")
		out := mustRun(t, bin, "LANGGRAPH_AES_KEY="+key, "MEMVAULT_DB="+db)
		check(t, out, "sqlite")
		wantMatch(t, out, `\(These rows are in SQLite; .*\)`)
		checkRows(t, "sqlite", db, key)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.SchemaDSN(t)
		out := mustRun(t, bin, "LANGGRAPH_AES_KEY="+key, "MEMVAULT_DSN="+dsn)
		check(t, out, "postgres")
		if strings.Contains(out, "These rows are in SQLite") {
			t.Fatalf("SQLite note on PostgreSQL:\n%s", out)
		}
		checkRows(t, "postgres", dsn, key)
	})
	t.Run("generated key", func(t *testing.T) {
		out := mustRun(t, bin)
		wantMatch(t, out, `  export LANGGRAPH_AES_KEY='[A-Za-z0-9_-]{32}'`)
		check(t, out, "sqlite")
	})
	t.Run("encoded key refused", func(t *testing.T) {
		_, errOut, code := run(t, bin, "LANGGRAPH_AES_KEY=base64:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
		if code == 0 || !strings.Contains(errOut, "Python reads LANGGRAPH_AES_KEY as raw characters") {
			t.Fatalf("a base64: key: exit %d, stderr %q; want a failure explaining raw keys", code, errOut)
		}
	})
}

// checkRows reads the rows the example wrote, as Python would, and opens
// every value with memvault's LangGraph-format cipher (AES-GCM, 16-byte
// nonce) and the raw key alone.
func checkRows(t *testing.T, backend, where, rawKey string) {
	t.Helper()
	ctx := context.Background()
	query := `SELECT type, blob FROM checkpoint_blobs WHERE thread_id = 'shared-with-python'
		UNION ALL SELECT type, blob FROM checkpoint_writes WHERE thread_id = 'shared-with-python'`
	var types []string
	var blobs [][]byte
	if backend == "postgres" {
		conn, err := pgx.Connect(ctx, where)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, _ := conn.Query(ctx, query)
		var typ string
		var blob []byte
		if _, err := pgx.ForEachRow(rows, []any{&typ, &blob}, func() error {
			types, blobs = append(types, typ), append(blobs, slices.Clone(blob))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	} else {
		db, err := sql.Open("sqlite", where)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var typ string
			var blob []byte
			if err := rows.Scan(&typ, &blob); err != nil {
				t.Fatal(err)
			}
			types, blobs = append(types, typ), append(blobs, blob)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(types) != 3 {
		t.Fatalf("%d value rows, want 3 (two channels and one pending write)", len(types))
	}
	key, err := crypto.ParseRawKey(rawKey)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := aead.NewAES(ring, crypto.ModeGCM)
	if err != nil {
		t.Fatal(err)
	}
	for i, typ := range types {
		if typ != "json+aes" {
			t.Errorf("row %d: type %q, want json+aes", i, typ)
			continue
		}
		plain, err := gcm.Decrypt(blobs[i], nil)
		if err != nil {
			t.Errorf("row %d: %v", i, err)
			continue
		}
		if !json.Valid(plain) {
			t.Errorf("row %d: plaintext is not JSON: %q", i, plain)
		}
	}
}
