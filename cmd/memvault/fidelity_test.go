package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestStoreValueFidelity: a value put through the CLI prints back with
// every number as it was written (integers beyond 2^53 and 2^64 exact, 5.0
// still a float) on every backend, plaintext and encrypted.
func TestStoreValueFidelity(t *testing.T) {
	const value = `{"big":123456789012345678901234567890,"exact":9007199254740993,"f":5.0,"huge":1e300,` +
		`"tiny":1e-7,"u":18446744073709551615,"neg":-9223372036854775808,"nested":[0.5,2,{"z":-0.0}]}`
	want, err := jsonvalue.Unmarshal([]byte(value))
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string][]string{
		"sqlite":           {"MEMVAULT_DB=" + filepath.Join(t.TempDir(), "p.db")},
		"sqlite_encrypted": sqliteEnv(t),
		"postgres":         {"MEMVAULT_DSN=" + pgtest.SchemaDSN(t)},
		"postgres_enc":     {"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey},
	} {
		t.Run(name, func(t *testing.T) {
			cli(t, env, "", "store", "put", "fid", "k", value).must(t, 0)
			out := cli(t, env, "", "store", "get", "fid", "k", "--json").must(t, 0).stdout
			var doc struct {
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			got, err := jsonvalue.Unmarshal(doc.Value)
			if err != nil {
				t.Fatal(err)
			}
			if d := jsonvalue.Diff(want, got); d != "" {
				t.Fatalf("store get printed %s: %s", doc.Value, d)
			}
		})
	}
}

// TestMetadataFidelity: checkpoint metadata keeps its numbers exactly
// through import, printing and export, on SQLite and PostgreSQL.
func TestMetadataFidelity(t *testing.T) {
	const md = `{"big":123456789012345678901234567890,"exact":9007199254740993,"f":5.0,"step":0,"u":18446744073709551615}`
	want, err := jsonvalue.Unmarshal([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	line := chainExport(t, "fid-md", 1)[0]
	fixed := strings.Replace(line, `"metadata":{"source":"loop","step":0}`, `"metadata":`+md, 1)
	if fixed == line {
		t.Fatalf("export line has no metadata to replace: %s", line)
	}
	for name, env := range map[string][]string{
		"sqlite":   sqliteEnv(t),
		"postgres": {"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey},
	} {
		t.Run(name, func(t *testing.T) {
			cli(t, env, "", "threads", "import", writeLines(t, []string{fixed})).must(t, 0)
			var tup struct {
				Metadata json.RawMessage `json:"metadata"`
			}
			if err := json.Unmarshal([]byte(cli(t, env, "", "threads", "show", "fid-md", "--json").must(t, 0).stdout), &tup); err != nil {
				t.Fatal(err)
			}
			checkModel(t, "threads show", want, tup.Metadata)
			out := cli(t, env, "", "threads", "export", "fid-md").must(t, 0).stdout
			var exp struct {
				Metadata json.RawMessage `json:"metadata"`
			}
			if err := json.Unmarshal([]byte(out), &exp); err != nil {
				t.Fatal(err)
			}
			checkModel(t, "threads export", want, exp.Metadata)
		})
	}
}

func checkModel(t *testing.T, what string, want any, text []byte) {
	t.Helper()
	got, err := jsonvalue.Unmarshal(text)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d := jsonvalue.Diff(want, got); d != "" {
		t.Fatalf("%s printed %s: %s", what, text, d)
	}
}

// TestListDeletePrefixDeleteCheckpoint: the contract's listing and
// deletion capabilities through the CLI, on SQLite.
func TestListDeletePrefixDeleteCheckpoint(t *testing.T) {
	env := sqliteEnv(t)
	for _, k := range []string{"b", "a", "c"} {
		cli(t, env, "", "store", "put", "users", "u1", k, `{"k":"`+k+`"}`).must(t, 0)
	}
	cli(t, env, "", "store", "put", "users", "u1", "chats", "x", `{}`).must(t, 0)
	cli(t, env, "", "store", "put", "users", "u10", "a", `{}`).must(t, 0)
	page := jsonLines[itemDoc](t, cli(t, env, "", "store", "list", "users", "u1", "--limit", "2", "--json").must(t, 0).stdout)
	if len(page) != 2 || page[0].Key != "a" || page[1].Key != "b" {
		t.Fatalf("first page = %+v", page)
	}
	page = jsonLines[itemDoc](t, cli(t, env, "", "store", "list", "users", "u1", "--after", "b", "--json").must(t, 0).stdout)
	if len(page) != 1 || page[0].Key != "c" {
		t.Fatalf("second page = %+v", page)
	}
	out := cli(t, env, "", "store", "delete-prefix", "users", "u1", "--json").must(t, 0).stdout
	if !strings.Contains(out, `"deleted": 4`) {
		t.Fatalf("delete-prefix printed %s, want 4 deleted", out)
	}
	cli(t, env, "", "store", "get", "users", "u10", "a").must(t, 0)
	cli(t, env, "", "store", "get", "users", "u1", "a").must(t, 1)
	cli(t, env, "", "store", "delete-prefix").must(t, 2)

	cli(t, env, "", "threads", "import", writeLines(t, chainExport(t, "dc", 3))).must(t, 0)
	var tup tupleDoc
	if err := json.Unmarshal([]byte(cli(t, env, "", "threads", "show", "dc", "--json").must(t, 0).stdout), &tup); err != nil {
		t.Fatal(err)
	}
	latest := tup.Config.Configurable.CheckpointID
	cli(t, env, "", "threads", "delete-checkpoint", "dc", "--checkpoint", latest).must(t, 0)
	if err := json.Unmarshal([]byte(cli(t, env, "", "threads", "show", "dc", "--json").must(t, 0).stdout), &tup); err != nil {
		t.Fatal(err)
	}
	if tup.Config.Configurable.CheckpointID == latest {
		t.Fatalf("the deleted checkpoint %s is still the latest", latest)
	}
	cli(t, env, "", "threads", "delete-checkpoint", "dc").must(t, 2)
}
