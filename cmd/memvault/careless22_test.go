package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// The careless user's first hour, second pass (session 22): each test is a
// suspicion the session-21 review left untested.

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestCarelessRefusedImportLeavesNothing: a thread file that import
// refuses (a line that is not JSON; a checkpoint whose parent is nowhere)
// gets the error alone — no "importing checkpoints: done, 0 checkpoints"
// line that reads as a success — a non-zero exit, and no new file: not the
// database, nor its key or audit file. On PostgreSQL no table is made (the
// schema still opens as "not found").
func TestCarelessRefusedImportLeavesNothing(t *testing.T) {
	good := chainExport(t, "refused", 3)
	orphan := slices.Clone(good[1:]) // its first checkpoint's parent is in no file and no target
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"not JSON", []string{good[0], "this is not json"}},
		{"parent missing", orphan},
	} {
		t.Run("sqlite/"+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.jsonl")
			if err := os.WriteFile(in, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"MEMVAULT_DB=" + filepath.Join(dir, "m.db"), "LANGGRAPH_AES_KEY=" + testKey,
				"MEMVAULT_AUDIT=true", "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:"}
			r := cli(t, env, "", "threads", "import", in)
			checkRefusal(t, r)
			if got := dirNames(t, dir); !slices.Equal(got, []string{"in.jsonl"}) {
				t.Errorf("a refused import left files behind: %q", got)
			}
			// The good file still imports into the same (new) path.
			if err := os.WriteFile(in, []byte(strings.Join(good, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cli(t, env, "", "threads", "import", in).must(t, 0)
		})
		t.Run("postgres/"+tc.name, func(t *testing.T) {
			env := []string{"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey}
			r := cli(t, env, "", "threads", "import", writeLines(t, tc.lines))
			checkRefusal(t, r)
			r = cli(t, env, "", "threads", "list").must(t, 1)
			if !strings.Contains(r.stderr, "database not found") {
				t.Errorf("after a refused import the schema has tables: threads list says %q", r.stderr)
			}
		})
	}
}

// checkRefusal: exit 1 and one line on stderr, the error.
func checkRefusal(t *testing.T, r result) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("refused import: exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("refused import printed on stdout: %q", r.stdout)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "line ") {
		t.Errorf("refused import: stderr should be the error alone (one line naming the line), got:\n%s", r.stderr)
	}
}

// TestCarelessImportLineLimit: a thread file line longer than --max-line
// (16 MiB by default) is refused naming the line, exit 1 like any bad
// line, before anything is written; a larger --max-line accepts it.
func TestCarelessImportLineLimit(t *testing.T) {
	lines := chainExport(t, "long-line", 3)
	// Line 2 carries a pending write of 200 KiB.
	big := strings.Repeat("x", 200<<10)
	lines[1] = strings.Replace(lines[1], `"pending_writes":[`, `"pending_writes":[{"task_id":"big","channel":"pad","value":{"type":"json","json":"`+big+`"}},`, 1)
	in := writeLines(t, lines)
	env := sqliteEnv(t)
	r := cli(t, env, "", "threads", "import", "--max-line", "100KiB", in)
	checkRefusal(t, r)
	if want := "line 2: invalid thread file: longer than 100KiB (102400 bytes)"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q, want it to hold %q", r.stderr, want)
	}
	if !strings.Contains(r.stderr, "--max-line") {
		t.Errorf("the refusal does not name the flag that raises the limit: %q", r.stderr)
	}
	cli(t, env, "", "threads", "list").must(t, 1) // nothing was created
	for _, bad := range []string{"0", "-1", "12XB", "1e99"} {
		cli(t, env, "", "threads", "import", "--max-line", bad, in).must(t, 2)
	}
	cli(t, env, "", "threads", "import", "--max-line", "1MiB", in).must(t, 0)
	if n := len(historyWrites(t, env, "long-line")); n != 3 {
		t.Fatalf("imported %d checkpoints, want 3", n)
	}
}

// TestCarelessErrorsArePlainText: an error for people is printed as text,
// not Go-quoted whole because one of its characters is a tab (pgx joins
// the addresses it tried with "\n\t": a connection refused was printed as
// "…\t127.0.0.1:1 …" between double quotes). What could forge output — an
// escape sequence in a typo'd flag — is still escaped, alone.
func TestCarelessErrorsArePlainText(t *testing.T) {
	r := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "--dsn", "postgres://127.0.0.1:1/db?connect_timeout=5", "threads", "list").must(t, 1)
	if strings.HasPrefix(r.stderr, `memvault: "`) || strings.Contains(r.stderr, `\t`) || strings.Contains(r.stderr, "\t") {
		t.Errorf("connection refused is not printed as plain text: %s", r.stderr)
	}
	if !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("stderr %q does not say the connection was refused", r.stderr)
	}
	r = cli(t, nil, "", "threads", "list", "--bogus\x1b[2Jflag").must(t, 2)
	if strings.Contains(r.stderr, "\x1b") || !strings.Contains(r.stderr, `unknown flag: --bogus\x1b[2Jflag`) || strings.HasPrefix(r.stderr, `memvault: "`) {
		t.Errorf("an escape sequence in an error is not escaped alone: %q", r.stderr)
	}
}

// TestCarelessErrorsNameWhatWasGiven: an error about the database names
// the flag the user gave (--db, --dsn, --schema), not the environment
// variable they did not set; DATABASE_URL when that is where the DSN came
// from; the variable when it was the variable.
func TestCarelessErrorsNameWhatWasGiven(t *testing.T) {
	dir := t.TempDir()
	key := "LANGGRAPH_AES_KEY=" + testKey
	badDSN := "postgres://127.0.0.1:1/db?sslmode=bogus"
	for _, tc := range []struct {
		env       []string
		args      []string
		want, not string
	}{
		{nil, []string{"--db", filepath.Join(dir, "typo.db")}, `does not exist`, "MEMVAULT_DB"},
		{nil, []string{"--db", filepath.Join(dir, "typo.db")}, `(--db)`, ""},
		{[]string{"MEMVAULT_DB=" + filepath.Join(dir, "typo.db")}, nil, `(MEMVAULT_DB)`, "--db"},
		{nil, []string{"--dsn", badDSN}, `vault: --dsn: cannot parse`, "MEMVAULT_DSN"},
		{[]string{"DATABASE_URL=" + badDSN}, nil, `vault: DATABASE_URL: cannot parse`, "MEMVAULT_DSN"},
		{[]string{"MEMVAULT_DSN=" + badDSN}, nil, `vault: MEMVAULT_DSN: cannot parse`, "--dsn"},
		{[]string{"MEMVAULT_DSN=" + badDSN}, []string{"--dsn", badDSN}, `vault: --dsn: cannot parse`, "MEMVAULT_DSN"},
		{nil, []string{"--dsn", pgtest.DSN(t), "--schema", "nosuchschema"}, `(--schema;`, "MEMVAULT_SCHEMA"},
	} {
		r := cli(t, append([]string{key}, tc.env...), "", append(tc.args, "threads", "list")...).must(t, 1)
		if !strings.Contains(r.stderr, tc.want) || tc.not != "" && strings.Contains(r.stderr, tc.not) {
			t.Errorf("env %q args %q:\n got: %s want it to hold %q and not %q", tc.env, tc.args, r.stderr, tc.want, tc.not)
		}
	}
}

// TestCarelessJSONVersion: --json --version prints one JSON object (the
// CLI's convention for a command that does not list); --version alone
// stays text.
func TestCarelessJSONVersion(t *testing.T) {
	for _, args := range [][]string{{"--json", "--version"}, {"--version", "--json"}} {
		r := cli(t, nil, "", args...).must(t, 0)
		got := jsonObject(t, r.stdout)
		if v, _ := got["version"].(string); v == "" {
			t.Errorf("%q: no version in %s", args, r.stdout)
		}
		if g, _ := got["go"].(string); !strings.HasPrefix(g, "go1.") {
			t.Errorf("%q: no Go version in %s", args, r.stdout)
		}
	}
	r := cli(t, nil, "", "--version").must(t, 0)
	if strings.HasPrefix(r.stdout, "{") {
		t.Errorf("--version without --json printed JSON: %s", r.stdout)
	}
}

// TestCarelessPreviousKeyErrorNamesItsVariable: a bad entry of
// LANGGRAPH_AES_KEY_PREVIOUS is reported under that name only; a key of 44
// characters that is the base64 of a 32-byte key, given without its
// "base64:" prefix, gets the hint — and no error prints any of the key.
func TestCarelessPreviousKeyErrorNamesItsVariable(t *testing.T) {
	db := "MEMVAULT_DB=" + filepath.Join(t.TempDir(), "m.db")
	r := cli(t, []string{db, "LANGGRAPH_AES_KEY=" + testKey, "LANGGRAPH_AES_KEY_PREVIOUS=shortkey"}, "", "threads", "list").must(t, 1)
	if !strings.Contains(r.stderr, "LANGGRAPH_AES_KEY_PREVIOUS") || strings.Contains(strings.ReplaceAll(r.stderr, "LANGGRAPH_AES_KEY_PREVIOUS", ""), "LANGGRAPH_AES_KEY") {
		t.Errorf("a bad previous key is blamed on another variable: %s", r.stderr)
	}
	if strings.Contains(r.stderr, "shortkey") {
		t.Errorf("key bytes printed: %s", r.stderr)
	}
	b64 := "q83vASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4k=" // base64 of 32 bytes
	for _, v := range []string{"LANGGRAPH_AES_KEY", "LANGGRAPH_AES_KEY_PREVIOUS"} {
		env := []string{db, "LANGGRAPH_AES_KEY=" + testKey, v + "=" + b64}
		r := cli(t, env, "", "threads", "list").must(t, 1)
		if !strings.Contains(r.stderr, `"base64:"`) || !strings.Contains(r.stderr, v+" ") && !strings.Contains(r.stderr, v+":") {
			t.Errorf("%s of 44 base64 characters: no hint naming the variable and base64: %s", v, r.stderr)
		}
		for i := 0; i+6 <= len(b64); i++ {
			if strings.Contains(r.stderr, b64[i:i+6]) {
				t.Fatalf("%s: part of the key printed (%q): %s", v, b64[i:i+6], r.stderr)
			}
		}
	}
}

// TestCarelessShowCheckpointHint: `threads show --checkpoint ID` with an id
// that is in no namespace of the thread says so (and how to list its
// checkpoints), instead of suggesting another namespace where it is not
// either; an id that is in another namespace gets that --ns.
func TestCarelessShowCheckpointHint(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	r := cli(t, env, "", "threads", "show", "golden-thread", "--checkpoint", "nope").must(t, 1)
	if strings.Contains(r.stderr, "--ns") || !strings.Contains(r.stderr, "threads history golden-thread") {
		t.Errorf("a checkpoint id in no namespace: %s", r.stderr)
	}
	out := cli(t, env, "", "--json", "threads", "history", "golden-thread", "--ns", "sub:1").must(t, 0).stdout
	var id string
	for line := range strings.Lines(out) {
		id, _ = jsonObject(t, line)["config"].(map[string]any)["configurable"].(map[string]any)["checkpoint_id"].(string)
		break
	}
	if id == "" {
		t.Fatalf("no checkpoint in namespace sub:1: %s", out)
	}
	r = cli(t, env, "", "threads", "show", "golden-thread", "--checkpoint", id).must(t, 1)
	if !strings.Contains(r.stderr, "--ns sub:1") {
		t.Errorf("a checkpoint id in another namespace: no --ns sub:1 hint: %s", r.stderr)
	}
	// Without --checkpoint the namespaces hint stays.
	r = cli(t, env, "", "threads", "show", "golden-thread", "--ns", "nope").must(t, 1)
	if !strings.Contains(r.stderr, "--ns sub:1") {
		t.Errorf("latest in a namespace the thread lacks: %s", r.stderr)
	}
}

// TestCarelessShowMissingThread: `threads show` of a thread that does not
// exist says so, not that a checkpoint is missing from a namespace.
func TestCarelessShowMissingThread(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	for _, args := range [][]string{{"nosuch"}, {"nosuch", "--checkpoint", "nope"}, {"nosuch", "--ns", "x"}} {
		r := cli(t, env, "", append([]string{"threads", "show"}, args...)...).must(t, 1)
		if !strings.Contains(r.stderr, `no thread "nosuch"`) {
			t.Errorf("show %q: %s", args, r.stderr)
		}
	}
}

// TestCarelessDemoSaysWhichDatabase: a user who exported MEMVAULT_DB or
// MEMVAULT_DSN for their own database and runs the demo is told, plainly,
// that the demo does not use them and runs on its own database (named);
// their file is not touched, and the demo still succeeds (README: `make
// demo` is one command on a fresh clone).
func TestCarelessDemoSaysWhichDatabase(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.db")
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"MEMVAULT_DB=" + mine}, "MEMVAULT_DB"},
		{[]string{"MEMVAULT_DSN=postgres://127.0.0.1:1/mine"}, "MEMVAULT_DSN"},
		{[]string{"DATABASE_URL=postgres://127.0.0.1:1/mine"}, "DATABASE_URL"},
	} {
		r := cli(t, tc.env, "", "demo").must(t, 0)
		head, _, _ := strings.Cut(r.stdout, "── 1.")
		if !strings.Contains(head, tc.want+" is set") || !strings.Contains(head, "the demo does not use it") || !strings.Contains(head, "memvault-demo-") {
			t.Errorf("%q: the demo does not say it ignores %s and where it runs:\n%s", tc.env, tc.want, head)
		}
		if strings.Contains(r.stdout+r.stderr, "127.0.0.1:1") {
			t.Errorf("the note prints the DSN (it may hold a password): %s", head)
		}
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("the demo wrote beside MEMVAULT_DB: %q", got)
	}
	// Without them, no such note.
	r := cli(t, nil, "", "demo").must(t, 0)
	if strings.Contains(r.stdout, "does not use") {
		t.Errorf("a note without MEMVAULT_DB/MEMVAULT_DSN set:\n%s", r.stdout)
	}
}

// TestCarelessTypoSubcommandIsUsage: a typo'd subcommand (`threads lst`)
// is a usage error (exit 2) with a suggestion, as a typo'd command is
// (`thread list`): it printed the group's help and exited 0, which a
// script takes for success. The group alone still prints its help.
func TestCarelessTypoSubcommandIsUsage(t *testing.T) {
	env := sqliteEnv(t)
	for _, tc := range []struct {
		args    []string
		suggest string
	}{
		{[]string{"threads", "lst"}, "list"},
		{[]string{"store", "serch", "users"}, "search"},
		{[]string{"keys", "rotate"}, ""},
		{[]string{"audit", "verfy"}, "verify"},
		{[]string{"bench", "chekpointer"}, "checkpointer"},
	} {
		r := cli(t, env, "", tc.args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `unknown command "`+tc.args[1]+`"`) || !strings.Contains(r.stderr, tc.suggest) {
			t.Errorf("memvault %q: exit %d, want 2 with the error (suggesting %q)\nstdout: %.200s\nstderr: %s", tc.args, r.code, tc.suggest, r.stdout, r.stderr)
		}
	}
	if r := cli(t, env, "", "threads").must(t, 0); !strings.Contains(r.stdout, "Available Commands") {
		t.Errorf("memvault threads: no help: %s", r.stdout)
	}
}

// TestCarelessTypoEnvVarWarned: a typo'd variable (MEMVAULT_DB_PATH,
// LANGGRAPH_AES_KEYS, MEMVAULT_KEY for the key) was ignored without a
// word: the command ran on ./memvault.db, or in plaintext. Each is now
// named in a warning with what it was likely meant as (never its value);
// the variables memvault reads, and those of its own tests and benchmarks,
// are not.
func TestCarelessTypoEnvVarWarned(t *testing.T) {
	dir := t.TempDir()
	env := []string{"MEMVAULT_DB=" + filepath.Join(dir, "m.db"), "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_BENCH_ITEMS=5", "MEMVAULT_PRINCIPAL=ann"}
	r := cli(t, env, "", "store", "put", "users", "alice", "k", `{"text":"x"}`).must(t, 0)
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("a warning with only known variables set: %s", r.stderr)
	}
	for _, tc := range []struct{ name, suggest string }{
		{"MEMVAULT_DB_PATH", "MEMVAULT_DB"},
		{"MEMVAULT_KEY", "LANGGRAPH_AES_KEY"},
		{"LANGGRAPH_AES_KEYS", "LANGGRAPH_AES_KEY"},
		{"MEMVALT_DSN", "MEMVAULT_DSN"},
		{"MEMVAULT_ENCRYPTON", "MEMVAULT_ENCRYPTION"},
	} {
		r := cli(t, append(env, tc.name+"=valuenotprinted"), "", "store", "get", "users", "alice", "k").must(t, 0)
		want := "warning: " + tc.name + " is set, but memvault reads no such variable (did you mean " + tc.suggest
		if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "valuenotprinted") {
			t.Errorf("%s: stderr %q, want %q", tc.name, r.stderr, want)
		}
	}
}

// TestKnownVariablesCoverConfig: every variable config reads and every one
// README's configuration table lists is known to the typo check, so it is
// never warned about.
func TestKnownVariablesCoverConfig(t *testing.T) {
	var src strings.Builder
	files, _ := filepath.Glob("../../config/*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(readme), "| variable | default | meaning |")
	table, _, _ = strings.Cut(table, "\n\n")
	found := 0
	for _, text := range []string{src.String(), table} {
		for _, m := range regexp.MustCompile("[\"`]((?:MEMVAULT|LANGGRAPH)_[A-Z0-9_]+)[\"`]").FindAllStringSubmatch(text, -1) {
			found++
			if !slices.Contains(knownVariables, m[1]) {
				t.Errorf("%s is read by config or listed in README but not in knownVariables", m[1])
			}
		}
	}
	if found < 30 {
		t.Fatalf("found %d variable names: the scan does not see them", found)
	}
}

// TestCarelessDBAndDSNBothGiven: `--db x.db --dsn postgres://…` names two
// databases; the command ran on the server and --db was silently ignored.
// It is a usage error naming both flags, before anything is opened.
func TestCarelessDBAndDSNBothGiven(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "--db", filepath.Join(dir, "x.db"), "--dsn", "postgres://127.0.0.1:1/x", "migrate").must(t, 2)
	if !strings.Contains(r.stderr, "--db") || !strings.Contains(r.stderr, "--dsn") || strings.Contains(r.stderr, "connect") {
		t.Errorf("stderr %q: want a usage error naming --db and --dsn", r.stderr)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("files made: %q", got)
	}
}

// TestImportIntoDatabaseMissingOnlyItsAuditTrail: the database exists but
// the audit trail just turned on has no table yet (Open with MustExist
// says "not found"). Import is not into a new database: it sees the
// checkpoints already there (a re-import is a no-op) and creates the
// trail, as before.
func TestImportIntoDatabaseMissingOnlyItsAuditTrail(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	export := cli(t, env, "", "threads", "export", "golden-thread").must(t, 0).stdout
	env = append(env, "MEMVAULT_AUDIT=true")
	r := cli(t, env, export, "threads", "import", "-").must(t, 0)
	if !strings.Contains(r.stdout, "imported 0 checkpoints (3 already present)") {
		t.Errorf("re-import into the existing database: %s", r.stdout)
	}
	cli(t, env, "", "audit", "verify").must(t, 0)
}

// TestCarelessFailedStepPrintsNoDone: a long command that fails does not
// print "…: done, N …" before its error (`threads export nosuch` printed
// "exporting threads: done, 0 threads in 0s", then the error).
func TestCarelessFailedStepPrintsNoDone(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
	for _, args := range [][]string{
		{"threads", "export", "golden-thread", "nosuch"},
	} {
		r := cli(t, env, "", args...).must(t, 1)
		if strings.Contains(r.stderr, ": done") {
			t.Errorf("memvault %q failed after a done line:\n%s", args, r.stderr)
		}
	}
}
