package checkpointertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer/internal/core"

	"github.com/memvault/memvault/checkpointer"
)

// valueCases are channel values of every kind the suite's value model has.
func valueCases() []struct {
	name  string
	value any
} {
	ts := time.Date(2024, 5, 4, 6, 32, 42, 235444000, time.UTC)
	return []struct {
		name  string
		value any
	}{
		{"null", nil},
		{"true", true},
		{"false", false},
		{"zero", int64(0)},
		{"int", int64(-123456789)},
		{"int_max", int64(math.MaxInt64)},
		{"int_min", int64(math.MinInt64)},
		{"int_beyond_float53", int64(1<<53 + 1)},
		{"float", 3.14159},
		{"float_tiny", 1e-300},
		{"float_huge", 1.7976931348623157e308},
		{"float_negative", -0.5},
		{"empty_string", ""},
		{"string", "hello, world"},
		{"unicode", "héllo wörld – 日本語 – 🦜🔗 – \u202e rtl – \U0010FFFF"},
		{"nul_in_string", "before\x00after"},
		{"control_chars", "\t\n\r\x01\x1f\x7f"},
		{"invalid_json_escapes", `"\u0000\" \\ </script>`},
		{"empty_list", []any{}},
		{"list", []any{int64(1), "two", 3.5, nil, true, []any{"nested"}}},
		{"empty_object", map[string]any{}},
		{"object", map[string]any{"a": int64(1), "b": map[string]any{"c": []any{"d", map[string]any{"e": nil}}}, "unicode ключ": "значение", "nul\x00key": "v"}},
		{"deep_nesting", deepValue(64)},
		{"bytes", []byte{0, 1, 2, 0xfe, 0xff}},
		{"empty_bytes", []byte{}},
		{"bytes_utf8_invalid", []byte("\xff\xfe\xfd")},
		{"time", ts},
		{"time_with_zone", ts.In(time.FixedZone("X", -7*3600))},
		{"nested_bytes_and_time", map[string]any{"raw": []byte("xyz"), "at": ts, "list": []any{[]byte{1}, ts}}},
	}
}

func deepValue(depth int) any {
	var v any = "bottom"
	for i := range depth {
		if i%2 == 0 {
			v = map[string]any{"d": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

func (s *suite) testValues(t *testing.T) {
	var cases []nsCase
	for _, vc := range valueCases() {
		cases = append(cases, nsCase{"channel/" + vc.name, func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("val")
			v := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{"ch": vc.value}, map[string]string{"ch": v})
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, map[string]string{"ch": v})
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			if d := diff(Normalize(vc.value), Normalize(got.Checkpoint.ChannelValues["ch"])); d != "" {
				t.Fatalf("value: %s", d)
			}
			if _, ok := got.Checkpoint.ChannelValues["ch"]; !ok {
				t.Fatalf("channel missing")
			}
		}}, nsCase{"write/" + vc.name, func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{"ch", vc.value}}, "task", "")
			checkWrites(t, sv, cfg, []pw{{"task", "ch", vc.value}})
		}})
	}
	cases = append(cases,
		nsCase{"large_value_8MiB", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("big")
			big := strings.Repeat("0123456789abcdef", 8<<20/16)
			raw := make([]byte, 8<<20)
			for i := range raw {
				raw[i] = byte(i * 7)
			}
			v := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{"text": big, "raw": raw}, map[string]string{"text": v, "raw": v})
			cfg := mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, map[string]string{"text": v, "raw": v})
			mustPutWrites(t, sv, cfg, []wr{{"raw", raw}}, "task", "")
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			if s, _ := got.Checkpoint.ChannelValues["text"].(string); s != big {
				t.Fatalf("8 MiB string came back with %d bytes", len(s))
			}
			if !Equal(raw, got.Checkpoint.ChannelValues["raw"]) {
				t.Fatalf("8 MiB bytes differ")
			}
			if len(got.PendingWrites) != 1 || !Equal(raw, got.PendingWrites[0].Value) {
				t.Fatalf("8 MiB write differs")
			}
		}},
		nsCase{"metadata_value_kinds", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("val")
			md := checkpointer.Metadata{
				"null": nil, "bool": true, "int": int64(math.MaxInt64), "neg": -1, "float": 2.5,
				"str": "日本語 🦜", "list": []any{1, "a", nil}, "obj": map[string]any{"x": map[string]any{"y": []any{}}},
			}
			cp := newCheckpoint(0, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, md, nil)
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), want{thread: thread, ns: ns, id: cp.ID, md: map[string]any(md)})
		}},
	)
	s.runNS(t, cases)
}

// metachars are names full of characters SQL, LIKE and JSON paths treat
// specially.
var metachars = []string{
	`it's`, `say "hi"`, `100%`, `a_b`, `back\slash`, `x; DROP TABLE checkpoints;--`,
	`%`, `_`, `\`, `'`, `"`, `;--`, `a.b`, `$[0]`, `{"json":1}`, "tab\tnew\nline", "ünï 🦜",
}

func (s *suite) testMetachars(t *testing.T) {
	for i, m := range metachars {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			sv := s.newSaver(t)
			thread := newThreadID("meta") + m
			ns := "ns" + m
			ch := "ch" + m
			key := "key" + m
			v := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{ch: m}, map[string]string{ch: v})
			md := checkpointer.Metadata{key: m, "nested": map[string]any{key: m}}
			cfg := mustPut(t, sv, cfgOf(thread, ns, ""), cp, md, map[string]string{ch: v})
			mustPutWrites(t, sv, cfg, []wr{{ch, m}}, "task"+m, "path"+m)
			// Decoys that a LIKE or unescaped match would confuse.
			for _, decoy := range []string{strings.ReplaceAll(thread, m, "x"), thread + "x", "x" + thread} {
				putChain(t, sv, decoy, ns, 1)
			}
			putChain(t, sv, thread, ns+"x", 1)
			w := want{thread: thread, ns: ns, id: cp.ID, cp: cloneCheckpoint(cp), md: map[string]any{key: m, "nested": map[string]any{key: m}}, writes: []pw{{"task" + m, ch, m}}}
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), w)
			c := cfgOf(thread, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{key: m}})
			checkIDs(t, "filter", idsOf(got), []string{cp.ID})
			got = mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"nested": map[string]any{key: m}}})
			checkIDs(t, "nested filter", idsOf(got), []string{cp.ID})
			got = mustList(t, sv, nil, checkpointer.ListOptions{Filter: map[string]any{key: m}})
			checkIDs(t, "filter over all threads", idsOf(got), []string{cp.ID})
			if err := sv.DeleteThread(t.Context(), thread); err != nil {
				t.Fatal(err)
			}
			if n := len(mustList(t, sv, nil, checkpointer.ListOptions{})); n != 3 {
				t.Fatalf("after deleting %q, %d tuples left, want the 3 decoys", thread, n)
			}
		})
	}
}

func (s *suite) testBadInput(t *testing.T) {
	s.runNS(t, []nsCase{
		{"put_missing_thread_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			_, err := sv.Put(t.Context(), cfgOf("", ns, ""), newCheckpoint(0, nil, nil), nil, nil)
			if !errors.Is(err, checkpointer.ErrMissingThreadID) {
				t.Fatalf("Put without thread id = %v, want ErrMissingThreadID", err)
			}
			if n := len(mustList(t, sv, nil, checkpointer.ListOptions{})); n != 0 {
				t.Fatalf("failed Put stored %d tuples", n)
			}
		}},
		{"put_nil_checkpoint", func(t *testing.T, sv checkpointer.Saver, ns string) {
			_, err := sv.Put(t.Context(), cfgOf(newThreadID("bad"), ns, ""), nil, nil, nil)
			if !errors.Is(err, checkpointer.ErrNilCheckpoint) {
				t.Fatalf("Put(nil checkpoint) = %v, want ErrNilCheckpoint", err)
			}
		}},
		{"put_checkpoint_without_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cp := newCheckpoint(0, nil, nil)
			cp.ID = ""
			_, err := sv.Put(t.Context(), cfgOf(newThreadID("bad"), ns, ""), cp, nil, nil)
			if !errors.Is(err, checkpointer.ErrInvalidCheckpoint) {
				t.Fatalf("Put(checkpoint without id) = %v, want ErrInvalidCheckpoint", err)
			}
		}},
		{"put_unencodable_value", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("bad")
			v := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{"ch": make(chan int)}, map[string]string{"ch": v})
			if _, err := sv.Put(t.Context(), cfgOf(thread, ns, ""), cp, nil, map[string]string{"ch": v}); err == nil {
				t.Fatal("Put of a Go channel value succeeded")
			}
			if tp := mustGet(t, sv, cfgOf(thread, ns, "")); tp != nil {
				t.Fatalf("failed Put stored %s", tp.Config.CheckpointID)
			}
		}},
		{"put_unencodable_metadata", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("bad")
			if _, err := sv.Put(t.Context(), cfgOf(thread, ns, ""), newCheckpoint(0, nil, nil), checkpointer.Metadata{"nan": math.NaN()}, nil); err == nil {
				t.Fatal("Put with NaN metadata succeeded (JSON cannot hold NaN)")
			}
			if tp := mustGet(t, sv, cfgOf(thread, ns, "")); tp != nil {
				t.Fatalf("failed Put stored %s", tp.Config.CheckpointID)
			}
		}},
		{"put_cyclic_metadata", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// A map that holds itself: the put fails with an error, it
			// does not exhaust the stack (the NUL stripping of metadata
			// recursed without bound and killed the process).
			thread := newThreadID("bad")
			loop := map[string]any{}
			loop["self"] = loop
			if _, err := sv.Put(t.Context(), cfgOf(thread, ns, ""), newCheckpoint(0, nil, nil), checkpointer.Metadata{"loop": loop}, nil); err == nil {
				t.Fatal("Put with cyclic metadata succeeded")
			}
			if tp := mustGet(t, sv, cfgOf(thread, ns, "")); tp != nil {
				t.Fatalf("failed Put stored %s", tp.Config.CheckpointID)
			}
		}},
		{"put_writes_missing_thread_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			err := sv.PutWrites(t.Context(), cfgOf("", ns, checkpointer.NewID(0)), toWrites([]wr{{"ch", 1}}), "task", "")
			if !errors.Is(err, checkpointer.ErrMissingThreadID) {
				t.Fatalf("PutWrites without thread id = %v, want ErrMissingThreadID", err)
			}
		}},
		{"put_writes_missing_checkpoint_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("bad")
			putChain(t, sv, thread, ns, 1)
			err := sv.PutWrites(t.Context(), cfgOf(thread, ns, ""), toWrites([]wr{{"ch", 1}}), "task", "")
			if !errors.Is(err, checkpointer.ErrMissingCheckpointID) {
				t.Fatalf("PutWrites without checkpoint id = %v, want ErrMissingCheckpointID", err)
			}
			if got := mustGetSome(t, sv, cfgOf(thread, ns, "")); len(got.PendingWrites) != 0 {
				t.Fatalf("failed PutWrites stored %d writes", len(got.PendingWrites))
			}
		}},
		{"put_writes_unencodable_value", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			if err := sv.PutWrites(t.Context(), cfg, toWrites([]wr{{"ok", 1}, {"bad", func() {}}}), "task", ""); err == nil {
				t.Fatal("PutWrites of a func value succeeded")
			}
			checkWrites(t, sv, cfg, nil)
		}},
		{"get_tuple_missing_thread_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			if _, err := sv.GetTuple(t.Context(), cfgOf("", ns, "")); !errors.Is(err, checkpointer.ErrMissingThreadID) {
				t.Fatalf("GetTuple without thread id = %v, want ErrMissingThreadID", err)
			}
		}},
		{"delete_thread_missing_thread_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			keep := putChain(t, sv, newThreadID("bad"), ns, 1)
			if err := sv.DeleteThread(t.Context(), ""); !errors.Is(err, checkpointer.ErrMissingThreadID) {
				t.Fatalf("DeleteThread(\"\") = %v, want ErrMissingThreadID", err)
			}
			mustGetSome(t, sv, keep[0].cfg)
		}},
	})
}

func (s *suite) testConcurrency(t *testing.T) {
	const workers, perWorker = 8, 12
	t.Run("one_thread", func(t *testing.T) {
		sv := s.newSaver(t)
		thread := newThreadID("conc")
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker*4)
		ids := make([][]string, workers)
		for w := range workers {
			wg.Go(func() {
				v := ""
				for i := range perWorker {
					v = sv.NextVersion(v)
					ch := fmt.Sprintf("w%d", w)
					cp := newCheckpoint(i, map[string]any{ch: i}, map[string]string{ch: v})
					cfg, err := sv.Put(t.Context(), cfgOf(thread, "", ""), cp, checkpointer.Metadata{"worker": w, "i": i}, map[string]string{ch: v})
					if err != nil {
						errs <- err
						return
					}
					ids[w] = append(ids[w], cp.ID)
					if err := sv.PutWrites(t.Context(), cfg, toWrites([]wr{{"ch", i}}), fmt.Sprintf("task-%d", w), ""); err != nil {
						errs <- err
					}
					if _, err := sv.GetTuple(t.Context(), cfgOf(thread, "", "")); err != nil {
						errs <- err
					}
					c := cfgOf(thread, "", "")
					for _, err := range sv.List(t.Context(), &c, checkpointer.ListOptions{Limit: 3}) {
						if err != nil {
							errs <- err
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := listThread(t, sv, thread, "")
		if len(got) != workers*perWorker {
			t.Fatalf("listed %d checkpoints, want %d", len(got), workers*perWorker)
		}
		for i := 1; i < len(got); i++ {
			if got[i-1].Config.CheckpointID <= got[i].Config.CheckpointID {
				t.Fatalf("list not newest first at %d", i)
			}
		}
		for w := range workers {
			for i, id := range ids[w] {
				tp := mustGetSome(t, sv, cfgOf(thread, "", id))
				ch := fmt.Sprintf("w%d", w)
				if !Equal(i, tp.Checkpoint.ChannelValues[ch]) || !Equal(w, tp.Metadata["worker"]) {
					t.Fatalf("checkpoint %s: values %v metadata %v", id, tp.Checkpoint.ChannelValues, tp.Metadata)
				}
				if d := writesDiff(tp.PendingWrites, []pw{{fmt.Sprintf("task-%d", w), "ch", i}}); d != "" {
					t.Fatalf("checkpoint %s: %s", id, d)
				}
			}
		}
	})
	t.Run("one_checkpoint_many_tasks", func(t *testing.T) {
		sv := s.newSaver(t)
		cfg := oneCheckpoint(t, sv, "")
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		for w := range workers {
			wg.Go(func() {
				for i := range perWorker {
					// Every worker retries the same task; first write wins.
					if err := sv.PutWrites(t.Context(), cfg, toWrites([]wr{{"ch", i}}), fmt.Sprintf("task-%d-%d", w, i), ""); err != nil {
						errs <- err
					}
					if err := sv.PutWrites(t.Context(), cfg, toWrites([]wr{{"shared", w}}), "shared-task", ""); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := mustGetSome(t, sv, cfg)
		if len(got.PendingWrites) != workers*perWorker+1 {
			t.Fatalf("%d writes, want %d", len(got.PendingWrites), workers*perWorker+1)
		}
	})
	t.Run("maintenance_while_writing", func(t *testing.T) {
		sv := s.newSaver(t)
		pr, canPrune := sv.(checkpointer.Pruner)
		cp, canCopy := sv.(checkpointer.Copier)
		rd, canDelete := sv.(checkpointer.RunDeleter)
		if !canPrune && !canCopy && !canDelete {
			t.Skipf("%T implements none of Pruner, Copier, RunDeleter", sv)
		}
		src, pruned := newThreadID("src"), newThreadID("pruned")
		var wg sync.WaitGroup
		errs := make(chan error, 1024)
		wg.Go(func() { // writer of src and pruned
			parents := map[string]string{}
			versions := map[string]string{}
			for i := range perWorker * 2 {
				for _, th := range []string{src, pruned} {
					v := sv.NextVersion(versions[th])
					versions[th] = v
					c := cfgOf(th, "", parents[th])
					c.Metadata = map[string]any{"run_id": fmt.Sprintf("run-%d", i%3)}
					ck := newCheckpoint(i, map[string]any{"v": fmt.Sprintf("%s-%d", th, i)}, map[string]string{"v": v})
					out, err := sv.Put(t.Context(), c, ck, checkpointer.Metadata{"i": i}, map[string]string{"v": v})
					if err != nil {
						errs <- err
						return
					}
					parents[th] = out.CheckpointID
					if err := sv.PutWrites(t.Context(), out, toWrites([]wr{{"w", i}}), "task", ""); err != nil {
						errs <- err
					}
				}
			}
		})
		var copies []string
		if canCopy {
			for i := range 4 {
				copies = append(copies, fmt.Sprintf("%s-copy%d", src, i)) // src's subject: see copyIDs
			}
			wg.Go(func() {
				for _, dst := range copies {
					if err := cp.CopyThread(t.Context(), src, dst); err != nil {
						errs <- err
					}
				}
			})
		}
		if canPrune {
			wg.Go(func() {
				for range perWorker {
					if err := pr.Prune(t.Context(), []string{pruned}, checkpointer.PruneKeepLatest); err != nil {
						errs <- err
					}
				}
			})
		}
		if canDelete {
			wg.Go(func() {
				for range perWorker {
					if err := rd.DeleteForRuns(t.Context(), []string{"run-nothing"}); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := len(listThread(t, sv, src, "")); n != perWorker*2 {
			t.Fatalf("source has %d checkpoints, want %d", n, perWorker*2)
		}
		// Every copied tuple reads the value its source has.
		for _, dst := range copies {
			for _, tp := range listThread(t, sv, dst, "") {
				orig := mustGetSome(t, sv, cfgOf(src, "", tp.Config.CheckpointID))
				if !Equal(orig.Checkpoint.ChannelValues, tp.Checkpoint.ChannelValues) || len(tp.PendingWrites) > 1 {
					t.Fatalf("copy %s of %s: values %v, source %v, writes %v", dst, tp.Config.CheckpointID, tp.Checkpoint.ChannelValues, orig.Checkpoint.ChannelValues, tp.PendingWrites)
				}
			}
		}
		if canPrune {
			latest := mustGetSome(t, sv, cfgOf(pruned, "", ""))
			if !Equal(fmt.Sprintf("%s-%d", pruned, perWorker*2-1), latest.Checkpoint.ChannelValues["v"]) {
				t.Fatalf("pruned thread's latest reads %v", latest.Checkpoint.ChannelValues)
			}
		}
	})
	t.Run("many_threads", func(t *testing.T) {
		sv := s.newSaver(t)
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker*2)
		threads := make([]string, workers)
		for w := range workers {
			threads[w] = newThreadID(fmt.Sprintf("conc%d", w))
			wg.Go(func() {
				parent, v := "", ""
				for i := range perWorker {
					v = sv.NextVersion(v)
					cp := newCheckpoint(i, map[string]any{"v": i}, map[string]string{"v": v})
					cfg, err := sv.Put(t.Context(), cfgOf(threads[w], "", parent), cp, checkpointer.Metadata{"step": i}, map[string]string{"v": v})
					if err != nil {
						errs <- err
						return
					}
					parent = cfg.CheckpointID
					tp, err := sv.GetTuple(t.Context(), cfgOf(threads[w], "", ""))
					if err != nil {
						errs <- err
					} else if tp == nil || tp.Config.CheckpointID != cp.ID {
						errs <- fmt.Errorf("thread %d step %d: latest is not the checkpoint just put", w, i)
					}
					if i == perWorker/2 && w%2 == 0 {
						// Delete another thread's history while it is being written.
						if err := sv.DeleteThread(t.Context(), newThreadID("gone")); err != nil {
							errs <- err
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for w, th := range threads {
			got := listThread(t, sv, th, "")
			if len(got) != perWorker {
				t.Fatalf("thread %d: %d checkpoints, want %d", w, len(got), perWorker)
			}
			for i, tp := range got {
				step := perWorker - 1 - i
				if !Equal(step, tp.Checkpoint.ChannelValues["v"]) {
					t.Fatalf("thread %d checkpoint %d: value %v", w, step, tp.Checkpoint.ChannelValues["v"])
				}
			}
		}
		if n := len(mustList(t, sv, nil, checkpointer.ListOptions{})); n != workers*perWorker {
			t.Fatalf("%d tuples over all threads, want %d", n, workers*perWorker)
		}
	})
}

func (s *suite) testStreaming(t *testing.T) {
	s.runNS(t, []nsCase{
		{"consumer_breaks_early", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("stream")
			chain := putChain(t, sv, thread, ns, 5)
			c := cfgOf(thread, ns, "")
			n := 0
			for tp, err := range sv.List(t.Context(), &c, checkpointer.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				if tp.Config.CheckpointID != chain[4].want.id {
					t.Fatalf("first = %s, want %s", tp.Config.CheckpointID, chain[4].want.id)
				}
				n++
				break
			}
			if n != 1 {
				t.Fatalf("consumed %d tuples", n)
			}
			// The saver is usable afterwards: nothing is left locked or open.
			next := mustPut(t, sv, chain[4].cfg, newCheckpoint(5, nil, nil), nil, nil)
			if got := mustGetSome(t, sv, cfgOf(thread, ns, "")); got.Config.CheckpointID != next.CheckpointID {
				t.Fatalf("latest after early break = %s, want %s", got.Config.CheckpointID, next.CheckpointID)
			}
			if err := sv.DeleteThread(t.Context(), thread); err != nil {
				t.Fatal(err)
			}
		}},
		{"many_early_breaks", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("stream")
			putChain(t, sv, thread, ns, 3)
			c := cfgOf(thread, ns, "")
			for range 50 {
				for _, err := range sv.List(t.Context(), &c, checkpointer.ListOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					break
				}
			}
			mustPut(t, sv, cfgOf(thread, ns, ""), newCheckpoint(9, nil, nil), nil, nil)
		}},
		{"reads_between_items", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("stream")
			chain := putChain(t, sv, thread, ns, 3)
			c := cfgOf(thread, ns, "")
			i := 0
			for tp, err := range sv.List(t.Context(), &c, checkpointer.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				checkTuple(t, mustGetSome(t, sv, tp.Config), chain[len(chain)-1-i].want)
				i++
			}
			if i != 3 {
				t.Fatalf("listed %d", i)
			}
		}},
	})
}

func (s *suite) testContext(t *testing.T) {
	s.runNS(t, []nsCase{
		{"cancelled", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("ctx")
			chain := putChain(t, sv, thread, ns, 2)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			check := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("%s with a cancelled context = %v, want context.Canceled", op, err)
				}
			}
			_, err := sv.Put(ctx, cfgOf(thread, ns, ""), newCheckpoint(3, nil, nil), nil, nil)
			check("Put", err)
			check("PutWrites", sv.PutWrites(ctx, chain[1].cfg, toWrites([]wr{{"ch", 1}}), "task", ""))
			_, err = sv.GetTuple(ctx, cfgOf(thread, ns, ""))
			check("GetTuple", err)
			c := cfgOf(thread, ns, "")
			var listErr error
			for tp, err := range sv.List(ctx, &c, checkpointer.ListOptions{}) {
				if err != nil {
					listErr = err
					break
				}
				if tp != nil {
					t.Fatalf("List with a cancelled context yielded %s", tp.Config.CheckpointID)
				}
			}
			check("List", listErr)
			check("DeleteThread", sv.DeleteThread(ctx, thread))
			// Nothing changed.
			got := listThread(t, sv, thread, ns)
			checkIDs(t, "after cancelled calls", idsOf(got), reversedIDs(chain))
			checkTuple(t, got[0], chain[1].want)
		}},
		{"cancelled_mid_list", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("ctx")
			putChain(t, sv, thread, ns, 4)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			c := cfgOf(thread, ns, "")
			n, sawErr := 0, false
			for _, err := range sv.List(ctx, &c, checkpointer.ListOptions{}) {
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Fatalf("List error = %v, want context.Canceled", err)
					}
					sawErr = true
					break
				}
				n++
				cancel()
			}
			// A backend that fetched every row before yielding may finish;
			// one that streams must stop with the context's error.
			if !sawErr && n != 4 {
				t.Fatalf("List stopped after %d tuples without an error", n)
			}
		}},
	})
}

func (s *suite) testNextVersion(t *testing.T) {
	sv := s.newSaver(t)
	num := func(v string) int64 {
		t.Helper()
		n, err := core.VersionNumber(v)
		if err != nil {
			t.Fatalf("NextVersion produced %q: %v", v, err)
		}
		return n
	}
	v := ""
	for i := int64(1); i <= 5; i++ {
		next := sv.NextVersion(v)
		if num(next) != i {
			t.Fatalf("NextVersion(%q) = %q, want integer part %d", v, next, i)
		}
		if v != "" && !(next > v) {
			t.Fatalf("NextVersion(%q) = %q does not sort after it", v, next)
		}
		v = next
	}
	for cur, w := range map[string]int64{"7": 8, "00000000000000000000000000000002.0.5": 3, "41.0": 42} {
		if got := num(sv.NextVersion(cur)); got != w {
			t.Fatalf("NextVersion(%q) has integer part %d, want %d", cur, got, w)
		}
	}
}
