package threadfile_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/serde"
)

// maxErr bounds an error naming hostile identifiers: a line number, what
// failed, the names by their length — not the names.
const maxErr = 1024

// checkErrText fails t unless err is short, names what it must (want),
// and carries no control byte or invalid UTF-8 of the hostile names.
func checkErrText(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if len(msg) > maxErr {
		t.Errorf("error of %d bytes (want under %d): %.300s…", len(msg), maxErr, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not say %q: %.300s", w, msg)
		}
	}
	if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\x00\x01\x1b\r\n") {
		t.Errorf("error carries raw control bytes or invalid UTF-8: %q", msg)
	}
}

// TestImportErrorsNameLongIdentifiersByLength: a thread file whose
// channel names, task ids, node names, value type tags or versions are
// long (64 KiB), or hold control characters or invalid UTF-8, is refused
// with an error that names the line and what failed, bounded in size
// and with nothing of the name raw in it (README, "Limits of
// identifiers").
func TestImportErrorsNameLongIdentifiersByLength(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("\x1b[2J", 16<<10) // 64 KiB of terminal escapes
	ctl := "ch\x1b]0;owned\x07\r\nforged line"
	bad8 := "ch\xff\xfe"
	undecodable := map[string]any{"type": "json", "json": json.RawMessage(`1`), "base64": "!!"}
	sv := savers()["memory"](t)
	putThread(t, sv, "t", 2)
	lines := strings.Split(strings.TrimSpace(string(export(t, sv, "t"))), "\n")
	type mutation struct {
		mutate func(m map[string]any)
		want   []string
	}
	write := func(task, ch string, v any) []any {
		return []any{map[string]any{"task_id": task, "channel": ch, "value": v}}
	}
	mutations := map[string]mutation{}
	for what, name := range map[string]string{"long": long, "control": ctl, "utf8": bad8} {
		mutations["channel name "+what] = mutation{func(m map[string]any) {
			m["channel_values"].(map[string]any)[name] = undecodable
		}, []string{"line 2", "channel"}}
		mutations["value type "+what] = mutation{func(m map[string]any) {
			m["channel_values"].(map[string]any)["n"] = map[string]any{"type": name, "json": json.RawMessage(`1`)}
		}, []string{"line 2", "channel"}}
		mutations["write channel "+what] = mutation{func(m map[string]any) {
			m["pending_writes"] = write("task", name, undecodable)
		}, []string{"line 2", "write"}}
		mutations["write task "+what] = mutation{func(m map[string]any) {
			m["pending_writes"] = write(name, "ch", undecodable)
		}, []string{"line 2", "task"}}
		mutations["write value type "+what] = mutation{func(m map[string]any) {
			m["pending_writes"] = write("task", "ch", map[string]any{"type": name, "json": json.RawMessage(`1`)})
		}, []string{"line 2", "write"}}
		mutations["versions_seen node "+what] = mutation{func(m map[string]any) {
			m["versions_seen"] = map[string]any{name: map[string]any{"n": ""}}
		}, []string{"line 2", "versions_seen"}}
		mutations["channel version name "+what] = mutation{func(m map[string]any) {
			m["channel_versions"].(map[string]any)[name] = ""
		}, []string{"line 2", "channel"}}
		// A thread or namespace with control characters is a valid id:
		// the line is given twice, and the second names them (a long one
		// is refused on the first).
		mutations["thread "+what] = mutation{func(m map[string]any) {
			m["thread_id"] = name
			delete(m, "parent_checkpoint_id")
		}, []string{"line ", "thread"}}
		mutations["namespace "+what] = mutation{func(m map[string]any) {
			m["checkpoint_ns"] = name
			delete(m, "parent_checkpoint_id")
		}, []string{"line ", "checkpoint_ns"}}
	}
	// A version with control characters is valid (and encoding/json
	// reads invalid UTF-8 as U+FFFD).
	for what, name := range map[string]string{"long": long} {
		mutations["channel version "+what] = mutation{func(m map[string]any) {
			m["channel_versions"].(map[string]any)["n"] = name
		}, []string{"line 2", "version"}}
		mutations["versions_seen version "+what] = mutation{func(m map[string]any) {
			m["versions_seen"] = map[string]any{"node": map[string]any{"n": name}}
		}, []string{"line 2", "versions_seen"}}
	}
	for what, mu := range mutations {
		t.Run(what, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
				t.Fatal(err)
			}
			mu.mutate(m)
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(m); err != nil {
				t.Fatal(err)
			}
			// encoding/json turns invalid UTF-8 into U+FFFD: the bytes
			// are put back, as a hostile file would have them.
			raw := strings.ReplaceAll(b.String(), `ch\ufffd\ufffd`, bad8)
			if mu.want[0] == "line " {
				raw += raw // the same line twice
			}
			dst := savers()["memory"](t)
			_, err := threadfile.Import(ctx, strings.NewReader(lines[0]+"\n"+raw), dst, threadfile.ImportOptions{})
			checkErrText(t, err, mu.want...)
			if tp, _ := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); tp != nil {
				t.Errorf("refused import stored %s", tp.Config.CheckpointID)
			}
		})
	}
}

// unencodable is a value a custom serializer stores and gives back as
// a channel, which the file's codec (JSONPlus) cannot write: what makes
// an export fail on a value.
type unencodable struct{}

// chanSerde is serde.JSONPlus with one more type tag, "test.chan", that
// decodes to a Go channel.
type chanSerde struct{ serde.JSONPlus }

func (s chanSerde) DumpsTyped(v any) (string, []byte, error) {
	if _, ok := v.(unencodable); ok {
		return "test.chan", []byte{}, nil
	}
	return s.JSONPlus.DumpsTyped(v)
}

func (s chanSerde) LoadsTyped(typ string, data []byte) (any, error) {
	if typ == "test.chan" {
		return make(chan int), nil
	}
	return s.JSONPlus.LoadsTyped(typ, data)
}

// TestExportErrorsNameLongIdentifiersByLength: an export that fails on a
// value names the thread, the checkpoint and the channel (or pending
// write) by their length when they are longer than the limit — a thread
// an earlier version stored on SQLite, without the limit, and the
// thread id the caller gave — not as a 3 000-byte line.
func TestExportErrorsNameLongIdentifiersByLength(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "legacy.db")
	open := func() *sqlitesaver.Saver {
		s, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{Serde: chanSerde{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open()
	for _, thread := range []string{"value", "write"} {
		v := s.NextVersion("")
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
			ChannelValues: map[string]any{"ch": "fine"}, ChannelVersions: map[string]string{"ch": v}, VersionsSeen: map[string]map[string]string{}}
		if thread == "value" {
			cp.ChannelValues["ch"] = unencodable{}
		}
		cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, map[string]string{"ch": v})
		if err != nil {
			t.Fatal(err)
		}
		if thread == "write" {
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "w", Value: unencodable{}}}, "task", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The ids are made long as an earlier version could store them.
	long := func(c string) string { return strings.Repeat(c, 3000) }
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`UPDATE checkpoints SET thread_id = ? || thread_id`,
		`UPDATE checkpoint_blobs SET thread_id = ? || thread_id`,
		`UPDATE checkpoint_writes SET thread_id = ? || thread_id, channel = ? || channel, task_id = ? || task_id`,
	} {
		args := []any{long("t"), long("c"), long("k")}[:strings.Count(q, "?")]
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("plant: %s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	for thread, want := range map[string][]string{
		long("t") + "value": {"thread of 3005 bytes", "channel \"ch\""},
		long("t") + "write": {"thread of 3005 bytes", "write", "channel of 3001 bytes", "task of 3004 bytes"},
	} {
		_, err := threadfile.Export(ctx, &bytes.Buffer{}, s, thread)
		checkErrText(t, err, want...)
		t.Logf("%.300v", err)
	}
}
