package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/sqlitetest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/*.golden (review the diff!)")

// binary is the memvault binary built once for the CLI tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memvault-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "memvault")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build memvault: %v\n%s", err, out)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	pgtest.Main(m)
}

type result struct {
	code           int
	stdout, stderr string
}

// cli runs the built binary with a clean environment plus env.
func cli(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return result{code, so.String(), se.String()}
}

func (r result) must(t *testing.T, want int) result {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, want, r.stdout, r.stderr)
	}
	return r
}

const testKey = "0123456789abcdef0123456789abcdef"

func sqliteEnv(t *testing.T) []string {
	return []string{"MEMVAULT_DB=" + filepath.Join(t.TempDir(), "m.db"), "LANGGRAPH_AES_KEY=" + testKey}
}

func TestExitCodes(t *testing.T) {
	env := sqliteEnv(t)
	// An existing database, so that "unknown thread" is about the thread
	// (a missing database has its own test, TestMissingDatabase).
	cli(t, env, "", "migrate").must(t, 0)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		msg  string
	}{
		{"unknown command", env, []string{"frobnicate"}, 2, "unknown command"},
		{"unknown flag", env, []string{"threads", "list", "--nope"}, 2, "unknown flag"},
		{"missing argument", env, []string{"threads", "show"}, 2, "accepts 1 arg"},
		{"fork without checkpoint", env, []string{"threads", "fork", "t1"}, 2, "--checkpoint"},
		{"bad filter", env, []string{"threads", "history", "t1", "--filter", "[1]"}, 2, "JSON object"},
		{"store value not object", env, []string{"store", "put", "a", "k", "[1]"}, 2, "JSON object"},
		{"unknown thread", env, []string{"threads", "show", "no-such-thread"}, 1, "not found"},
		{"short key", []string{"MEMVAULT_DB=" + filepath.Join(t.TempDir(), "x.db"), "LANGGRAPH_AES_KEY=short"}, []string{"threads", "list"}, 1, "LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long."},
		{"bad encryption mode", append(env, "MEMVAULT_ENCRYPTION=rot13"), []string{"threads", "list"}, 1, "MEMVAULT_ENCRYPTION"},
		{"bad embeddings", append(env, "MEMVAULT_EMBEDDINGS=word2vec"), []string{"threads", "list"}, 1, "MEMVAULT_EMBEDDINGS"},
		{"bench without postgres", env, []string{"bench", "checkpointer"}, 2, "needs PostgreSQL"},
		{"bench unknown op", env, []string{"bench", "store", "--dsn", "postgres://nobody@127.0.0.1:1/x", "--ops", "nope"}, 2, "unknown operation \"nope\""},
		{"negative search limit", env, []string{"store", "search", "--limit", "-1"}, 2, "--limit"},
		{"negative search offset", env, []string{"store", "search", "--offset", "-1"}, 2, "--offset"},
		{"negative namespaces depth", env, []string{"store", "namespaces", "--max-depth", "-1"}, 2, "--max-depth"},
		{"negative reencrypt batch", env, []string{"keys", "reencrypt", "--batch", "-5"}, 2, "--batch"},
		{"invalid namespace", env, []string{"store", "put", "langgraph", "k", "{}"}, 2, "invalid namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, tc.env, "", tc.args...).must(t, tc.code)
			if !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("stderr %q does not mention %q", r.stderr, tc.msg)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("error is not one line: %q", r.stderr)
			}
			if strings.Contains(r.stderr, testKey) || strings.Contains(r.stdout, testKey) {
				t.Fatal("output contains the key")
			}
		})
	}
}

func TestKeys(t *testing.T) {
	r := cli(t, nil, "", "keys", "generate", "--json").must(t, 0)
	var out struct{ Key string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(out.Key, "base64:"))
	if err != nil || len(raw) != 32 || !strings.HasPrefix(out.Key, "base64:") {
		t.Fatalf("generated key %q is not base64: of 32 bytes", out.Key)
	}
	r = cli(t, nil, "", "keys", "generate", "--raw").must(t, 0)
	if k := strings.TrimSpace(r.stdout); len(k) != 32 {
		t.Fatalf("raw key %q is not 32 characters", k)
	}
	env := []string{"LANGGRAPH_AES_KEY=" + out.Key, "LANGGRAPH_AES_KEY_PREVIOUS=" + testKey}
	r = cli(t, env, "", "keys", "check", "--json").must(t, 0)
	var rep struct {
		Mode string
		Keys []struct {
			Role  string
			ID    string
			Bytes int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "envelope" || len(rep.Keys) != 2 || rep.Keys[0].Role != "primary" || rep.Keys[1].Bytes != 32 {
		t.Fatalf("keys check = %+v", rep)
	}
	if strings.Contains(r.stdout, testKey) || strings.Contains(r.stdout, out.Key) {
		t.Fatal("keys check printed a key")
	}
}

// TestThreadsGolden imports a fixed export and checks the JSON the thread
// commands print against golden files, on SQLite and on PostgreSQL.
func TestThreadsGolden(t *testing.T) {
	backends := map[string][]string{
		"sqlite":   sqliteEnv(t),
		"postgres": {"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey},
	}
	for name, env := range backends {
		t.Run(name, func(t *testing.T) { threadsGolden(t, env) })
	}
}

// threadsGolden is TestThreadsGolden on the database env names: import,
// history, show, export, fork and delete through the CLI.
func threadsGolden(t *testing.T, env []string) {
	t.Helper()
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	r := cli(t, env, "", "threads", "import", "testdata/thread.jsonl", "--json").must(t, 0)
	var st threadfile.ImportStats
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Imported != 0 || st.Skipped != 3 {
		t.Fatalf("second import = %+v, want a no-op", st)
	}
	golden(t, "history.golden", cli(t, env, "", "threads", "history", "golden-thread", "--json").must(t, 0).stdout)
	golden(t, "history_root_limit1.golden", cli(t, env, "", "threads", "history", "golden-thread", "--ns", "", "--limit", "1", "--json").must(t, 0).stdout)
	golden(t, "history_filter.golden", cli(t, env, "", "threads", "history", "golden-thread", "--filter", `{"user_id":"alice"}`, "--json").must(t, 0).stdout)
	golden(t, "show.golden", cli(t, env, "", "threads", "show", "golden-thread", "--checkpoint", "1f0c6a2e-2222-6000-8000-000000000002", "--json").must(t, 0).stdout)

	// Export and import into a fresh SQLite database: same history.
	exp := cli(t, env, "", "threads", "export", "golden-thread").must(t, 0).stdout
	other := sqliteEnv(t)
	cli(t, other, exp, "threads", "import", "-").must(t, 0)
	golden(t, "history.golden", cli(t, other, "", "threads", "history", "golden-thread", "--json").must(t, 0).stdout)

	// Fork from the first checkpoint with a changed channel.
	r = cli(t, env, "", "threads", "fork", "golden-thread", "--checkpoint", "1f0c6a2e-1111-6000-bfff-000000000001", "--set", `messages=[{"role":"user","content":"forked"}]`, "--json").must(t, 0)
	var fork struct{ Configurable configurable }
	if err := json.Unmarshal([]byte(r.stdout), &fork); err != nil {
		t.Fatal(err)
	}
	var tup tupleDoc
	show := cli(t, env, "", "threads", "show", "golden-thread", "--checkpoint", fork.Configurable.CheckpointID, "--json").must(t, 0).stdout
	if err := json.Unmarshal([]byte(show), &tup); err != nil {
		t.Fatal(err)
	}
	if tup.ParentConfig == nil || tup.ParentConfig.Configurable.CheckpointID != "1f0c6a2e-1111-6000-bfff-000000000001" || tup.Metadata["source"] != "fork" {
		t.Fatalf("fork tuple = %s", show)
	}
	if msgs, _ := tup.Checkpoint.ChannelValues["messages"].([]any); len(msgs) != 1 {
		t.Fatalf("forked messages = %v", tup.Checkpoint.ChannelValues["messages"])
	}

	cli(t, env, "", "threads", "delete", "golden-thread").must(t, 0)
	cli(t, env, "", "threads", "show", "golden-thread").must(t, 1)
}

func TestStoreCommands(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "store", "put", "users", "alice", "contact", `{"text":"prefers email, never phone"}`).must(t, 0)
	cli(t, env, "", "store", "put", "users", "alice", "plan", `{"text":"premium plan since 2021","tier":3}`).must(t, 0)
	cli(t, env, "", "store", "put", "users", "bob", "plan", `{"text":"basic plan","tier":1}`).must(t, 0)

	var it itemDoc
	if err := json.Unmarshal([]byte(cli(t, env, "", "store", "get", "users", "alice", "contact", "--json").must(t, 0).stdout), &it); err != nil {
		t.Fatal(err)
	}
	if it.Value["text"] != "prefers email, never phone" || strings.Join(it.Namespace, "/") != "users/alice" {
		t.Fatalf("get = %+v", it)
	}
	res := jsonLines[itemDoc](t, cli(t, env, "", "store", "search", "users", "--query", "how to contact by email", "--limit", "1", "--json").must(t, 0).stdout)
	if len(res) != 1 || res[0].Key != "contact" || res[0].Score == nil {
		t.Fatalf("search = %+v", res)
	}
	res = jsonLines[itemDoc](t, cli(t, env, "", "store", "search", "users", "--filter", `{"tier":{"$gt":2}}`, "--json").must(t, 0).stdout)
	if len(res) != 1 || res[0].Key != "plan" || res[0].Namespace[1] != "alice" {
		t.Fatalf("filtered search = %+v", res)
	}
	var nss [][]string
	for _, l := range jsonLines[struct{ Namespace []string }](t, cli(t, env, "", "store", "namespaces", "--prefix", "users", "--json").must(t, 0).stdout) {
		nss = append(nss, l.Namespace)
	}
	if fmt.Sprint(nss) != "[[users alice] [users bob]]" {
		t.Fatalf("namespaces = %v", nss)
	}
	cli(t, env, "", "store", "delete", "users", "alice", "contact").must(t, 0)
	cli(t, env, "", "store", "get", "users", "alice", "contact").must(t, 1)
}

func TestSerdeDecode(t *testing.T) {
	// {"a":1} as JSON and as LangGraph's aes (GCM) blob from the reference
	// known-answer vector.
	r := cli(t, nil, "", "serde", "decode", "--type", "json", "--base64", base64.StdEncoding.EncodeToString([]byte(`{"a":1}`))).must(t, 0)
	if strings.Join(strings.Fields(r.stdout), "") != `{"a":1}` {
		t.Fatalf("decode json = %q", r.stdout)
	}
	env := []string{"LANGGRAPH_AES_KEY=" + testKey}
	r = cli(t, env, "", "serde", "decode", "--type", "msgpack+aes", "--hex", "000102030405060708090a0b0c0d0e0fd346c6089a2457ed498240206c1513286767f3a1").must(t, 0)
	if strings.Join(strings.Fields(r.stdout), "") != `{"a":1}` {
		t.Fatalf("decode msgpack+aes = %q", r.stdout)
	}
	r = cli(t, env, "", "serde", "decode", "--type", "msgpack+aes", "--hex", "000102030405060708090a0b0c0d0e0fd346c6089a2457ed498240206c1513286767f3a0").must(t, 1)
	if !strings.Contains(r.stderr, "decryption failed") {
		t.Fatalf("tampered blob: %q", r.stderr)
	}
	cli(t, env, "", "serde", "decode", "--type", "json").must(t, 2)
}

func TestMigrate(t *testing.T) {
	env := sqliteEnv(t)
	var ms struct {
		Backend string
		Tables  []struct {
			Table   string
			Version int
		}
	}
	if err := json.Unmarshal([]byte(cli(t, env, "", "migrate", "--json").must(t, 0).stdout), &ms); err != nil {
		t.Fatal(err)
	}
	if len(ms.Tables) < 2 || ms.Backend != "sqlite" {
		t.Fatalf("migrate = %+v", ms)
	}
	env = []string{"MEMVAULT_DSN=" + pgtest.SchemaDSN(t)}
	if err := json.Unmarshal([]byte(cli(t, env, "", "migrate", "--json").must(t, 0).stdout), &ms); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range ms.Tables {
		got[m.Table] = m.Version
	}
	if got["checkpoint_migrations"] != 9 || got["store_migrations"] != 3 || got["vector_migrations"] != 2 {
		t.Fatalf("postgres migrations = %v", got)
	}
}

func TestDemo(t *testing.T) {
	r := cli(t, nil, "", "demo").must(t, 0)
	for _, want := range []string{
		"using a fresh demo key",
		"graph paused at",
		"resumed with: approved",
		"crash",
		"not re-run",
		"History, newest first",
		"forked",
		"recalled contact:",
		"re-encrypted",
		"with only the new key",
		"json+mvgcm",
		"done in",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(r.stdout)
	}
}

// TestDemoOptions runs the demo with a key and a mode from the environment
// and on a named file, as the README's demo row and configuration table say.
func TestDemoOptions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	r := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "demo", "--db", db).must(t, 0)
	if !strings.Contains(r.stdout, "database "+db+" (sqlite)") || !strings.Contains(r.stdout, "encryption envelope\n") {
		t.Errorf("demo header does not name the file and the envelope mode:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "fresh demo key") {
		t.Error("demo generated a key although LANGGRAPH_AES_KEY is set")
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("--db file: %v", err)
	}

	r = cli(t, []string{"MEMVAULT_ENCRYPTION=off"}, "", "demo").must(t, 0)
	if !strings.Contains(r.stdout, "encryption off\n") || strings.Contains(r.stdout, "json+mvgcm") || strings.Contains(r.stdout, "fresh demo key") {
		t.Errorf("demo with MEMVAULT_ENCRYPTION=off encrypted anyway:\n%s", r.stdout)
	}

	r = cli(t, nil, "", "demo", "--dsn", "postgres://nowhere.invalid/db").must(t, 2)
	if !strings.Contains(r.stderr, "--db") {
		t.Errorf("demo --dsn: stderr %q does not point at --db", r.stderr)
	}
}

// TestReencryptJSON checks that keys reencrypt --json spells its counters in
// snake case like every other --json output.
func TestReencryptJSON(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "store", "put", "users", "a", "k", `{"text":"x"}`).must(t, 0)
	newKey := "fedcba9876543210fedcba9876543210"
	env = append(env, "LANGGRAPH_AES_KEY="+newKey, "LANGGRAPH_AES_KEY_PREVIOUS="+testKey)
	r := cli(t, env, "", "keys", "reencrypt", "--json").must(t, 0)
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"dry_run":     false,
		"checkpoints": map[string]any{"scanned": 0.0, "rewritten": 0.0},
		"store":       map[string]any{"scanned": 1.0, "rewritten": 1.0},
		// The vectors were keyed by the previous key: re-embedded too.
		"vectors": map[string]any{"reembedded": 1.0},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reencrypt --json = %v, want %v", got, want)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update-golden once and review the file)", err, t.Name())
	}
	if string(want) != got {
		t.Fatalf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestEmptyThreadID: an empty thread id (an unset shell variable) is a usage
// error for every command taking thread ids, never "every thread", and
// prints nothing on stdout — least of all decrypted values.
func TestEmptyThreadID(t *testing.T) {
	db := filepath.Join(t.TempDir(), "d.db")
	demo := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "demo", "--db", db).must(t, 0)
	_, newKey, ok := strings.Cut(demo.stdout, "export LANGGRAPH_AES_KEY=")
	if !ok {
		t.Fatalf("the demo did not print its rotated key:\n%s", demo.stdout)
	}
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + strings.Fields(newKey)[0]}
	if r := cli(t, env, "", "threads", "list", "--json").must(t, 0); !strings.Contains(r.stdout, "thread_id") {
		t.Fatalf("the demo left no thread to leak: %s", r.stdout)
	}
	for _, args := range [][]string{
		{"threads", "history", ""},
		{"threads", "export", ""},
		{"threads", "export", "support-1", ""},
		{"threads", "show", ""},
		{"threads", "delete", ""},
		{"threads", "fork", "", "--checkpoint", "x"},
		{"threads", "history", "a\x01\xff"},
	} {
		r := cli(t, env, "", args...).must(t, 2)
		if r.stdout != "" {
			t.Errorf("%q printed %q on stdout", args, r.stdout)
		}
		if !strings.Contains(r.stderr, "thread") {
			t.Errorf("%q: stderr %q does not say what is wrong", args, r.stderr)
		}
	}
	if r := cli(t, env, "", "threads", "list", "--json").must(t, 0); !strings.Contains(r.stdout, "thread_id") {
		t.Fatalf("a refused command deleted threads: %s", r.stdout)
	}
}

// TestSerdeDecodePythonUUID: `serde decode` prints a Python UUID as its
// canonical string.
func TestSerdeDecodePythonUUID(t *testing.T) {
	hexUUID := "3165663466373937383333353634323838303031386131353033663962383735" // the 32 hex digits, in ASCII
	r := cli(t, nil, "", "serde", "decode", "--type", "msgpack", "--hex", "81a26964c72d0093a475756964a455554944d920"+hexUUID).must(t, 0)
	if !strings.Contains(r.stdout, `"1ef4f797-8335-6428-8001-8a1503f9b875"`) {
		t.Fatalf("serde decode printed %s", r.stdout)
	}
}

// TestImportValidatesThenCompletes: `threads import` checks the whole
// file before writing (a broken line anywhere writes nothing, and the error
// names the line), and importing into a target that holds the checkpoints
// but lost some pending writes (an earlier import stopped half way) writes
// them, so the target ends equal to the source.
func TestImportValidatesThenCompletes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	demo := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "demo", "--db", src).must(t, 0)
	_, key, _ := strings.Cut(demo.stdout, "export LANGGRAPH_AES_KEY=")
	srcEnv := []string{"MEMVAULT_DB=" + src, "LANGGRAPH_AES_KEY=" + strings.Fields(key)[0]}
	export := cli(t, srcEnv, "", "threads", "export", demoThread).must(t, 0).stdout
	lines := strings.Split(strings.TrimSpace(export), "\n")
	if len(lines) < 3 {
		t.Fatalf("export has %d lines", len(lines))
	}
	dst := filepath.Join(dir, "dst.db")
	dstEnv := []string{"MEMVAULT_DB=" + dst, "LANGGRAPH_AES_KEY=" + testKey}

	broken := slices.Clone(lines)
	// Put's rule for versions (checkpointer.ValidateVersion): not empty.
	broken[2] = strings.Replace(broken[2], `"channel_versions":{`, `"channel_versions":{"bogus":"",`, 1)
	noParent := slices.Clone(lines[1:])
	badID := slices.Clone(lines)
	badID[1] = strings.Replace(badID[1], `"checkpoint_id":"`, `"checkpoint_id":"x`, 1)
	for name, tc := range map[string]struct {
		file string
		msg  string
	}{
		"bad version":    {strings.Join(broken, "\n"), "line 3"},
		"missing parent": {strings.Join(noParent, "\n"), "line 1: invalid thread file: parent checkpoint"},
		"bad id":         {strings.Join(badID, "\n"), "line 2: invalid thread file"},
	} {
		r := cli(t, dstEnv, tc.file, "threads", "import", "-")
		if r.code == 0 || !strings.Contains(r.stderr, tc.msg) {
			t.Fatalf("%s: exit %d, stderr %q; want a failure naming %q", name, r.code, r.stderr, tc.msg)
		}
		// A refused file creates nothing: the target is still missing.
		if r := cli(t, dstEnv, "", "threads", "list", "--json").must(t, 1); !strings.Contains(r.stderr, "database not found") {
			t.Fatalf("%s: a refused file created the target: %s", name, r.stderr)
		}
	}

	cli(t, dstEnv, export, "threads", "import", "-").must(t, 0)
	db, err := sql.Open("sqlite", dst)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`DELETE FROM checkpoint_writes WHERE idx = 0`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatal("no pending write to lose: the test proves nothing")
	}
	db.Close()
	cli(t, dstEnv, export, "threads", "import", "-").must(t, 0)
	if got := cli(t, dstEnv, "", "threads", "export", demoThread).must(t, 0).stdout; got != export {
		t.Fatalf("after re-import the target differs from the source:\n%s\nwant\n%s", got, export)
	}
}

// TestKeysCensus: `keys census` counts rows per table, cipher and key id on
// SQLite and PostgreSQL without the previous key (it decrypts nothing), and
// shows rows move to the primary key after `keys reencrypt`.
func TestKeysCensus(t *testing.T) {
	const newKey = "fedcba9876543210fedcba9876543210"
	for name, base := range map[string][]string{
		"sqlite":   {"MEMVAULT_DB=" + filepath.Join(t.TempDir(), "c.db")},
		"postgres": {"MEMVAULT_DSN=" + pgtest.SchemaDSN(t)},
	} {
		t.Run(name, func(t *testing.T) {
			old := append(slices.Clone(base), "LANGGRAPH_AES_KEY="+testKey, "MEMVAULT_EMBEDDINGS=none")
			for i := range 3 {
				cli(t, old, "", "store", "put", "users", "u", fmt.Sprint("k", i), `{"v":1}`).must(t, 0)
			}
			census := func(env []string) map[string]int64 {
				rows := jsonLines[struct {
					Table, Cipher, Role string
					KeyID               string `json:"key_id"`
					Rows                int64
				}](t, cli(t, env, "", "keys", "census", "--json").must(t, 0).stdout)
				m := map[string]int64{}
				for _, r := range rows {
					m[r.Table+"/"+r.Cipher+"/"+r.Role] += r.Rows
				}
				return m
			}
			// Only the new key configured: the old rows are "unknown", and
			// counting them needs no key.
			onlyNew := append(slices.Clone(base), "LANGGRAPH_AES_KEY="+newKey, "MEMVAULT_EMBEDDINGS=none")
			if got := census(onlyNew); got["store/mvgcm/unknown"] != 3 {
				t.Fatalf("census with only the new key: %v", got)
			}
			rotated := append(slices.Clone(base), "LANGGRAPH_AES_KEY="+newKey, "LANGGRAPH_AES_KEY_PREVIOUS="+testKey, "MEMVAULT_EMBEDDINGS=none")
			if got := census(rotated); got["store/mvgcm/previous"] != 3 {
				t.Fatalf("census before reencrypt: %v", got)
			}
			r := cli(t, rotated, "", "keys", "reencrypt", "--compact").must(t, 0)
			if !strings.Contains(r.stderr, "compacted") {
				t.Fatalf("reencrypt --compact: stderr %q", r.stderr)
			}
			if got := census(rotated); got["store/mvgcm/primary"] != 3 || got["store/mvgcm/previous"] != 0 {
				t.Fatalf("census after reencrypt: %v", got)
			}
		})
	}
}

// TestForgetAndRotateKEK: `forget` erases one subject with a receipt and
// leaves the other; `keys rotate-kek` re-wraps the remaining data key under
// a new master key, after which the data reads with it.
func TestForgetAndRotateKEK(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "m.db")
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:", "MEMVAULT_SUBJECT_NAMESPACE=users"}
	envMap := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		envMap[k] = v
	}
	c, err := config.FromLookup(func(k string) (string, bool) { v, ok := envMap[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	h, err := vault.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"carol", "dave"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": who}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: who + ":t"}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.Put(ctx, store.Namespace{"users", who}, "k", map[string]any{"v": who}); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	// Another process reading the key table holds a copy of carol's key:
	// forget says the erasure is pending and exits 3, and a rerun once the
	// reader is gone finishes it (before, forget exited 0 with the key still
	// in the file).
	stopReader := sqlitetest.StartReader(t, db+".keys")
	res := cli(t, env, "", "forget", "--wait", "200ms", "carol")
	if res.code != 3 || !strings.Contains(res.stdout, "PENDING") || !strings.Contains(res.stdout, "threads deleted:  1") {
		t.Fatalf("forget with a reader on the key table: %+v", res)
	}
	stopReader()
	out := cli(t, env, "", "forget", "carol").must(t, 0).stdout
	for _, want := range []string{"subject:          carol", "threads deleted:  1", "memories deleted: 1", "mac (audit key):  ", "finished:  "} {
		if !strings.Contains(out, want) {
			t.Fatalf("forget output lacks %q:\n%s", want, out)
		}
	}
	var r struct {
		Subject string   `json:"subject"`
		KeyIDs  []string `json:"key_ids"`
		MAC     string   `json:"mac"`
	}
	if err := json.Unmarshal([]byte(cli(t, env, "", "--json", "forget", "dave").must(t, 0).stdout), &r); err != nil || r.Subject != "dave" || len(r.KeyIDs) != 1 || len(r.MAC) != 64 {
		t.Fatalf("forget --json: %+v, %v", r, err)
	}
	if res := cli(t, []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey}, "", "forget", "carol"); res.code == 0 || !strings.Contains(res.stderr, "per-subject keys are off") {
		t.Fatalf("forget without subjects: %+v", res)
	}

	// A new subject's key, then a new master key with the old one as
	// previous: rotate-kek re-wraps it.
	cli(t, env, "", "store", "put", "users", "erin", "k", `{"v": "erin"}`).must(t, 0)
	newKey := "fedcba9876543210fedcba9876543210"
	rotated := append(env[:1:1], "LANGGRAPH_AES_KEY="+newKey, "LANGGRAPH_AES_KEY_PREVIOUS="+testKey, env[2], env[3])
	out = cli(t, rotated, "", "keys", "rotate-kek").must(t, 0).stdout
	if !strings.Contains(out, "re-wrapped 1 of 1 data keys") {
		t.Fatalf("rotate-kek: %s", out)
	}
	out = cli(t, rotated, "", "keys", "rotate-kek").must(t, 0).stdout
	if !strings.Contains(out, "re-wrapped 0 of 1 data keys") {
		t.Fatalf("second rotate-kek: %s", out)
	}
	out = cli(t, rotated, "", "store", "get", "users", "erin", "k").must(t, 0).stdout
	if !strings.Contains(out, "erin") {
		t.Fatalf("erin after KEK rotation: %s", out)
	}
}

// TestReaderProcess is the other process of sqlitetest.StartReader.
func TestReaderProcess(t *testing.T) { sqlitetest.ReaderProcess(t) }

// TestAuditTrail: with MEMVAULT_AUDIT on, the CLI's reads, writes and an
// erasure are recorded with the principal; `audit verify` passes on the
// untouched trail and fails once a record is edited in the file.
func TestAuditTrail(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_AUDIT=true", "MEMVAULT_PRINCIPAL=dr.smith",
		"MEMVAULT_SUBJECT_NAMESPACE=users"}
	cli(t, env, "", "store", "put", "users", "carol", "diet", `{"v": "no peanuts"}`).must(t, 0)
	cli(t, env, "", "store", "get", "users", "carol", "diet").must(t, 0)
	cli(t, env, "", "forget", "carol").must(t, 0)
	out := cli(t, env, "", "audit", "verify").must(t, 0).stdout
	if !strings.Contains(out, "audit trail intact: 4 records") {
		t.Fatalf("verify: %s", out)
	}
	show := cli(t, env, "", "audit", "show", "--subject", "carol").must(t, 0).stdout
	for _, want := range []string{"dr.smith\titem.write\tusers/carol/diet\tcarol", "item.read\tusers/carol/diet", "subject.erase\tcarol", "item.delete\tusers/carol\t"} {
		if !strings.Contains(show, want) {
			t.Fatalf("show lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "peanuts") {
		t.Fatal("a value reached the audit trail")
	}
	raw, err := sql.Open("sqlite", db+".audit")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE memvault_audit SET principal = 'someone else' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	res := cli(t, env, "", "audit", "verify")
	if res.code != 1 || !strings.Contains(res.stderr, "record 2 does not match its MAC") {
		t.Fatalf("verify after tampering: %+v", res)
	}
	// The trail off (the subjects stay on: the store's vectors are in the
	// subjects' spaces, which only their keys search): an audited database
	// opens for no command that would not record.
	for _, args := range [][]string{{"audit", "verify"}, {"threads", "list"}, {"store", "put", "users", "carol", "k9", `{"v": 1}`}} {
		if res := cli(t, []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_SUBJECT_NAMESPACE=users"}, "", args...); res.code != 1 || !strings.Contains(res.stderr, "has an audit trail") || !strings.Contains(res.stderr, "MEMVAULT_AUDIT=true") {
			t.Fatalf("%v with the trail off: %+v", args, res)
		}
	}
}
