package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/vault"
)

// forgedLine is what an id would print as, unescaped: a record of its own
// in `audit show`, a row of its own in the other lists.
const forgedLine = "\n999\t2025-01-01T00:00:00Z\tadmin\tsubject.erase\tcarol"

func auditEnv(t *testing.T) (db string, env []string) {
	db = filepath.Join(t.TempDir(), "m.db")
	return db, []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + testKey, "MEMVAULT_AUDIT=true", "MEMVAULT_PRINCIPAL=dr.smith",
		"MEMVAULT_SUBJECT_NAMESPACE=users", "MEMVAULT_EMBEDDINGS=none"}
}

// noForgedLine fails when out has a line that starts like the forged
// record, or a line with more tab-separated columns than want (0: any).
func noForgedLine(t *testing.T, what, out string, columns int) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(line, "999") || strings.HasPrefix(line, "  threads deleted: 99") {
			t.Fatalf("%s prints a forged line %q:\n%s", what, line, out)
		}
		if columns > 0 && strings.Count(line, "\t") != columns-1 {
			t.Fatalf("%s: line %q has %d columns, want %d", what, line, strings.Count(line, "\t")+1, columns)
		}
	}
}

// TestAuditShowEscapes: ids holding a newline and tabs (a store key, a
// thread id) print escaped, one record a line, in `audit show` and in the
// other lists that print ids; a principal holding them is refused.
func TestAuditShowEscapes(t *testing.T) {
	db, env := auditEnv(t)
	cli(t, env, "", "store", "put", "users", "carol", "diet"+forgedLine, `{"v": 1}`).must(t, 0)
	c := config.Default()
	c.DBPath, c.Keys.Primary, c.Audit, c.Embeddings = db, testKey, true, "none"
	c.Subjects.NamespacePrefix = []string{"users"} // as auditEnv: carol's memory is under her key
	h, err := vault.Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"x": 1}, ChannelVersions: map[string]string{"x": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(context.Background(), checkpointer.Config{ThreadID: "t1" + forgedLine}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	h.Close()

	show := cli(t, env, "", "audit", "show").must(t, 0).stdout
	noForgedLine(t, "audit show", show, 7)
	if n := strings.Count(show, "\n"); n != 2 {
		t.Fatalf("audit show prints %d lines for 2 records:\n%s", n, show)
	}
	if !strings.Contains(show, `users/carol/"diet\n999\t2025-01-01T00:00:00Z\tadmin\tsubject.erase\tcarol"`) {
		t.Fatalf("audit show does not print the target escaped:\n%s", show)
	}
	noForgedLine(t, "threads list", cli(t, env, "", "threads", "list").must(t, 0).stdout, 0)
	noForgedLine(t, "store list", cli(t, env, "", "store", "list", "users", "carol").must(t, 0).stdout, 0)
	noForgedLine(t, "store search", cli(t, env, "", "store", "search", "users").must(t, 0).stdout, 0)
	// JSON output keeps the id as it is.
	var rec struct{ Target string }
	js := cli(t, env, "", "--json", "audit", "show").must(t, 0).stdout
	if err := json.NewDecoder(strings.NewReader(js)).Decode(&rec); err != nil || rec.Target != "users.carol/diet"+forgedLine {
		t.Fatalf("audit show --json: %+v, %v", rec, err)
	}

	// A principal that would forge lines is refused, in one line.
	bad := append(env[:len(env):len(env)], "MEMVAULT_PRINCIPAL=mallory"+forgedLine)
	res := cli(t, bad, "", "store", "get", "users", "carol", "diet")
	if res.code != 1 || !strings.Contains(res.stderr, "invalid principal") || strings.Count(strings.TrimSpace(res.stderr), "\n") != 0 {
		t.Fatalf("a principal with control characters: %+v", res)
	}

	// The erasure receipt names the subject escaped.
	if res := cli(t, env, "", "forget", "bob\n  threads deleted: 99"); res.code == 0 {
		noForgedLine(t, "forget", res.stdout, 0)
	}
}

// TestAuditAnchorCLI: `audit anchor` emits the head as one JSON line (to
// stdout, or appended to --out); `audit verify --anchor` passes on the
// untouched trail and catches it cut back, which plain `audit verify`
// cannot.
func TestAuditAnchorCLI(t *testing.T) {
	db, env := auditEnv(t)
	anchors := filepath.Join(t.TempDir(), "anchors.jsonl")
	cli(t, env, "", "store", "put", "users", "carol", "diet", `{"v": 1}`).must(t, 0)
	if out := cli(t, env, "", "audit", "anchor", "--out", anchors).must(t, 0).stdout; out != "" {
		t.Fatalf("anchor --out printed %q", out)
	}
	cli(t, env, "", "store", "get", "users", "carol", "diet").must(t, 0)
	line := cli(t, env, "", "audit", "anchor").must(t, 0).stdout
	var a struct {
		Seq        int64  `json:"seq"`
		Link       string `json:"link"`
		DatabaseID string `json:"database_id"`
		Time       string `json:"time"`
		MAC        string `json:"mac"`
	}
	if strings.Count(line, "\n") != 1 || json.Unmarshal([]byte(line), &a) != nil || a.Seq != 4 || len(a.Link) != 64 || len(a.DatabaseID) != 32 || a.Time == "" || a.MAC == "" {
		t.Fatalf("anchor: %q", line)
	}
	f, err := os.OpenFile(anchors, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line)
	f.Close()
	cli(t, env, "", "store", "get", "users", "carol", "diet").must(t, 0)

	out := cli(t, env, "", "audit", "verify", "--anchor", anchors).must(t, 0).stdout
	if !strings.Contains(out, "audit trail intact: 5 records") || !strings.Contains(out, "extends all 2 anchors") {
		t.Fatalf("verify --anchor: %s", out)
	}
	raw, err := sql.Open("sqlite", db+".audit")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM memvault_audit WHERE seq >= 3`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	cli(t, env, "", "audit", "verify").must(t, 0) // the limit of the chain alone
	res := cli(t, env, "", "audit", "verify", "--anchor", anchors)
	if res.code != 1 || !strings.Contains(res.stderr, "the trail ends at record 2, but the anchor") {
		t.Fatalf("verify --anchor after a cut: %+v", res)
	}
	var v struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	res = cli(t, env, "", "--json", "audit", "verify", "--anchor", anchors)
	if res.code != 1 || json.Unmarshal([]byte(res.stdout), &v) != nil || v.OK || !strings.Contains(v.Error, "cut off") {
		t.Fatalf("verify --json --anchor after a cut: %+v", res)
	}
	if res := cli(t, env, "", "audit", "verify", "--anchor", filepath.Join(t.TempDir(), "none")); res.code != 1 || !strings.Contains(res.stderr, "--anchor") {
		t.Fatalf("verify --anchor of a missing file: %+v", res)
	}
}

// TestAuditVerifyAfterRotation: the rotation the README documents (new key,
// old one previous, keys reencrypt, old one retired) leaves a trail that
// `audit verify` passes with the new key alone.
func TestAuditVerifyAfterRotation(t *testing.T) {
	_, env := auditEnv(t)
	cli(t, env, "", "store", "put", "users", "carol", "diet", `{"v": 1}`).must(t, 0)
	cli(t, env, "", "store", "get", "users", "carol", "diet").must(t, 0)
	const newKey = "fedcba9876543210fedcba9876543210"
	rotating := append(env[:1:1], append([]string{"LANGGRAPH_AES_KEY=" + newKey, "LANGGRAPH_AES_KEY_PREVIOUS=" + testKey}, env[2:]...)...)
	cli(t, rotating, "", "keys", "reencrypt").must(t, 0)
	retired := append(env[:1:1], append([]string{"LANGGRAPH_AES_KEY=" + newKey}, env[2:]...)...)
	out := cli(t, retired, "", "audit", "verify").must(t, 0).stdout
	if !strings.Contains(out, "audit trail intact: 5 records") || !strings.Contains(out, "2 of them are under an audit key no longer configured") {
		t.Fatalf("verify with the new key alone: %s", out)
	}
	// The old key alone no longer verifies what came after it.
	if res := cli(t, env, "", "audit", "verify"); res.code != 1 || !strings.Contains(res.stderr, "not configured") {
		t.Fatalf("verify with the retired key: %+v", res)
	}
}

// TestAuditVerifyPendingRecords: `audit verify` fails on a pending record
// copied and inserted again once chained (replay), and warns, exit 0, of
// a record of a write chained long after records made later than it (a
// pending record withheld, or a write that slow to commit).
func TestAuditVerifyPendingRecords(t *testing.T) {
	db, env := auditEnv(t)
	cli(t, env, "", "store", "put", "users", "carol", "diet", `{"v": 1}`).must(t, 0)
	ctx := audit.WithPrincipal(context.Background(), "mallory")
	// A write's record as the vault's trail makes it, an hour old: made
	// with the trail's key and database id.
	c := config.Default()
	c.DBPath, c.Keys.Primary, c.Audit, c.Embeddings = db, testKey, true, "none"
	c.Subjects.NamespacePrefix = []string{"users"} // as auditEnv
	h, err := vault.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	ak, err := keys.DeriveAuditKey(h.Keyring.Primary())
	if err != nil {
		t.Fatal(err)
	}
	dbID := h.Audit.DatabaseID()
	h.Close()
	tb, err := sqliteaudit.Open(ctx, db+".audit")
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	tr, err := audit.NewTrail(tb, audit.Options{Key: ak, DatabaseID: dbID, WritesInTx: true,
		Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	row, ok, err := tr.RecordInTx(ctx, audit.Entry{Op: audit.OpCheckpointWrite, Target: "withheld"})
	if err != nil || !ok {
		t.Fatalf("RecordInTx = %v, %v", ok, err)
	}
	raw, err := sql.Open("sqlite", db+".audit")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(row.Values)), ", ")
	if _, err := raw.Exec(`INSERT INTO `+row.Table+` (`+strings.Join(row.Columns, ", ")+`) VALUES (`+marks+`)`, row.Values...); err != nil {
		t.Fatal(err)
	}
	copied, err := tb.PagePending(ctx, time.Time{}, "", 10)
	if err != nil || len(copied) != 1 {
		t.Fatalf("PagePending = %v, %v", copied, err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	out := cli(t, env, "", "audit", "verify").must(t, 0).stdout
	if !strings.Contains(out, "audit trail intact: 2 records") || !strings.Contains(out, "warning: 1 records of writes were chained more than 10m0s after a record made later than them (the first: record 2)") {
		t.Fatalf("verify with a late record:\n%s", out)
	}
	var v struct {
		OK        bool  `json:"ok"`
		Late      int64 `json:"late"`
		FirstLate int64 `json:"first_late"`
	}
	if js := cli(t, env, "", "--json", "audit", "verify").must(t, 0).stdout; json.Unmarshal([]byte(js), &v) != nil || !v.OK || v.Late != 1 || v.FirstLate != 2 {
		t.Fatalf("verify --json with a late record: %s", js)
	}

	if err := tb.AddPending(ctx, copied); err != nil {
		t.Fatal(err)
	}
	res := cli(t, env, "", "audit", "verify")
	if res.code != 1 || !strings.Contains(res.stderr, "was chained already, as record 2") {
		t.Fatalf("verify with a replayed pending record: %+v", res)
	}
}
