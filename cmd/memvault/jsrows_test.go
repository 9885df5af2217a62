package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/jsrows"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestHistoryOfJSThread prints, through the CLI, a thread that JS
// LangGraph's PostgresSaver wrote (the interop fixture holds its rows
// exactly as JS wrote them), then moves it to SQLite and back to another
// PostgreSQL schema with integer versions, as `threads export | import` does.
func TestHistoryOfJSThread(t *testing.T) {
	pool, schema := pgtest.Schema(t)
	if err := jsrows.Exec(context.Background(), pool, jsrows.JSRowsSQL); err != nil {
		t.Fatal(err)
	}
	env := []string{"MEMVAULT_DSN=" + pgtest.DSN(t), "MEMVAULT_SCHEMA=" + schema}
	out := cli(t, env, "", "threads", "history", jsrows.JSGraphThread, "--json").must(t, 0).stdout
	var tuples []tupleDoc
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var d tupleDoc
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		tuples = append(tuples, d)
	}
	if len(tuples) < 3 {
		t.Fatalf("history printed %d tuples:\n%s", len(tuples), out)
	}
	values := 0
	for _, d := range tuples {
		values += len(d.Checkpoint.ChannelValues)
		for ch, v := range d.Checkpoint.ChannelVersions {
			if strings.Contains(v, ".") {
				t.Errorf("JS integer version of %s came back as %q", ch, v)
			}
		}
	}
	if values == 0 {
		t.Fatalf("no channel values printed:\n%s", out)
	}

	exp := cli(t, env, "", "threads", "export", jsrows.JSGraphThread).must(t, 0).stdout
	target := []string{"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "MEMVAULT_VERSIONS=int"}
	cli(t, target, exp, "threads", "import", "-").must(t, 0)
	again := cli(t, target, "", "threads", "history", jsrows.JSGraphThread, "--json").must(t, 0).stdout
	if again != out {
		t.Fatalf("history after export/import differs:\n--- before\n%s\n--- after\n%s", out, again)
	}
}
