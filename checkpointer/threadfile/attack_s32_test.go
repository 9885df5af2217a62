package threadfile_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
)

// TestImportErrorsDoNotEchoLongFields: a hostile or corrupt file whose
// checkpoint_id, parent_checkpoint_id, ts or format is a long string (up to
// a line's limit, 16 MiB) is refused with an error that names the field by
// its length, not one that quotes it whole into a terminal or log.
func TestImportErrorsDoNotEchoLongFields(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("A", 1<<20)
	mutations := map[string]func(m map[string]any){
		"checkpoint_id":        func(m map[string]any) { m["checkpoint_id"] = long },
		"parent_checkpoint_id": func(m map[string]any) { m["parent_checkpoint_id"] = long },
		"ts":                   func(m map[string]any) { m["ts"] = long },
		"format":               func(m map[string]any) { m["format"] = long },
	}
	sv := savers()["memory"](t)
	putThread(t, sv, "t", 2)
	lines := strings.Split(strings.TrimSpace(string(export(t, sv, "t"))), "\n")
	for what, mutate := range mutations {
		t.Run(what, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
				t.Fatal(err)
			}
			mutate(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			dst := savers()["memory"](t)
			_, err = threadfile.Import(ctx, strings.NewReader(lines[0]+"\n"+string(b)+"\n"), dst, threadfile.ImportOptions{})
			if err == nil {
				t.Fatal("imported")
			}
			if len(err.Error()) > 2048 || !strings.Contains(err.Error(), "line 2") {
				t.Errorf("error of %d bytes (want it short, naming line 2): %.200s…", len(err.Error()), err)
			}
			if tp, _ := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); tp != nil {
				t.Errorf("refused import stored %s", tp.Config.CheckpointID)
			}
		})
	}
}

// TestImportHostileMetadataNothingHalfImported: a file of two threads whose
// second carries metadata some backend cannot store (a NUL in a string,
// which PostgreSQL's jsonb refuses; a key over the identifier limit; deep
// nesting) is refused as a whole on every backend: the first thread is not
// left imported.
func TestImportHostileMetadataNothingHalfImported(t *testing.T) {
	ctx := context.Background()
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	hostile := map[string]string{
		"nul value":  `{"note":"a\u0000b"}`,
		"nul key":    `{"a\u0000b":1}`,
		"deep":       `{"deep":` + deep + `}`,
		"bad utf8":   "{\"note\":\"a\xffb\"}",
		"long key":   `{"` + strings.Repeat("k", 70000) + `":1}`,
		"huge int":   `{"n":1e400}`,
		"source int": `{"source":7,"step":"x"}`,
	}
	for name, newSaver := range savers() {
		t.Run(name, func(t *testing.T) {
			src := newSaver(t)
			putThread(t, src, "a", 1)
			putThread(t, src, "b", 1)
			good := strings.TrimSpace(string(export(t, src, "a")))
			second := strings.TrimSpace(string(export(t, src, "b")))
			for what, md := range hostile {
				i := strings.Index(second, `"metadata":`)
				j := strings.Index(second[i:], `},"pending_writes"`)
				if i < 0 || j < 0 {
					t.Fatalf("no metadata in %s", second)
				}
				bad := second[:i] + `"metadata":` + md + second[i+j+1:]
				dst := newSaver(t)
				st, err := threadfile.Import(ctx, strings.NewReader(good+"\n"+bad+"\n"), dst, threadfile.ImportOptions{})
				ta, _ := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "a"})
				tb, _ := dst.GetTuple(ctx, checkpointer.Config{ThreadID: "b"})
				switch {
				case err == nil:
					// Accepted: then both threads are there, the metadata
					// as it was.
					if ta == nil || tb == nil {
						t.Errorf("%s: import said %+v, but a=%v b=%v", what, st, ta != nil, tb != nil)
					}
				case ta != nil || tb != nil:
					t.Errorf("%s: import failed (%.200v) but left a=%v b=%v", what, err, ta != nil, tb != nil)
				}
				if err != nil && len(err.Error()) > 2048 {
					t.Errorf("%s: error of %d bytes", what, len(err.Error()))
				}
				t.Logf("%s: %.200v", what, err)
			}
		})
	}
}
