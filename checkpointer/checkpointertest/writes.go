package checkpointertest

import (
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// wr is a write to store: (channel, value).
type wr struct {
	ch string
	v  any
}

// pw is a pending write to expect: (task id, channel, value).
type pw struct {
	task, ch string
	v        any
}

func toWrites(ws []wr) []checkpointer.Write {
	out := make([]checkpointer.Write, len(ws))
	for i, w := range ws {
		out[i] = checkpointer.Write{Channel: w.ch, Value: w.v}
	}
	return out
}

// oneCheckpoint stores a single checkpoint and returns its config.
func oneCheckpoint(t *testing.T, sv checkpointer.Saver, ns string) checkpointer.Config {
	t.Helper()
	return mustPut(t, sv, cfgOf(newThreadID("writes"), ns, ""), newCheckpoint(0, nil, nil), checkpointer.Metadata{"source": "loop", "step": 0}, nil)
}

func checkWrites(t *testing.T, sv checkpointer.Saver, cfg checkpointer.Config, w []pw) {
	t.Helper()
	got := mustGetSome(t, sv, cfg)
	if d := writesDiff(got.PendingWrites, w); d != "" {
		t.Fatalf("pending writes of %s: %s", cfg.CheckpointID, d)
	}
}

func (s *suite) testPutWrites(t *testing.T) {
	s.runNS(t, []nsCase{
		{"basic", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{"ch", "val"}}, "task-1", "")
			checkWrites(t, sv, cfg, []pw{{"task-1", "ch", "val"}})
		}},
		{"many_writes_one_task", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{"z", 1}, {"a", 2}, {"m", 3}, {"a", 4}}, "task", "")
			checkWrites(t, sv, cfg, []pw{{"task", "z", 1}, {"task", "a", 2}, {"task", "m", 3}, {"task", "a", 4}})
		}},
		{"many_tasks_ordered_by_task_then_idx", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{"c", "c0"}, {"c", "c1"}}, "task-c", "")
			mustPutWrites(t, sv, cfg, []wr{{"a", "a0"}}, "task-a", "")
			mustPutWrites(t, sv, cfg, []wr{{"b", "b0"}, {checkpointer.ChannelError, "boom"}, {"b", "b2"}}, "task-b", "")
			checkWrites(t, sv, cfg, []pw{
				{"task-a", "a", "a0"},
				{"task-b", checkpointer.ChannelError, "boom"}, {"task-b", "b", "b0"}, {"task-b", "b", "b2"},
				{"task-c", "c", "c0"}, {"task-c", "c", "c1"},
			})
		}},
		{"task_path_accepted", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{"ch", "v"}}, "task-1", "~__pregel_pull, node")
			checkWrites(t, sv, cfg, []pw{{"task-1", "ch", "v"}})
		}},
		{"idempotent", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{"ch", "first"}, {"other", 1}}, "task-1", "")
			mustPutWrites(t, sv, cfg, []wr{{"ch", "second"}, {"other", 2}}, "task-1", "")
			checkWrites(t, sv, cfg, []pw{{"task-1", "ch", "first"}, {"task-1", "other", 1}})
		}},
		{"retry_adds_missing_positions", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{"ch", "first"}}, "task-1", "")
			mustPutWrites(t, sv, cfg, []wr{{"ch", "second"}, {"more", "added"}}, "task-1", "")
			checkWrites(t, sv, cfg, []pw{{"task-1", "ch", "first"}, {"task-1", "more", "added"}})
		}},
		{"special_channels_upsert", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelError, "e1"}}, "task-1", "")
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelInterrupt, map[string]any{"value": "i1"}}}, "task-1", "")
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelError, "e2"}}, "task-1", "")
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelInterrupt, map[string]any{"value": "i2"}}, {checkpointer.ChannelResume, "r"}}, "task-1", "")
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelScheduled, nil}}, "task-1", "")
			// Ordered by idx: __resume__ -4, __interrupt__ -3, __scheduled__ -2, __error__ -1.
			checkWrites(t, sv, cfg, []pw{
				{"task-1", checkpointer.ChannelResume, "r"},
				{"task-1", checkpointer.ChannelInterrupt, map[string]any{"value": "i2"}},
				{"task-1", checkpointer.ChannelScheduled, nil},
				{"task-1", checkpointer.ChannelError, "e2"},
			})
		}},
		{"mixed_call_first_write_wins", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelError, "e1"}, {"ch", "c1"}}, "task-1", "")
			// Not every write is special: insert-if-absent for all of them.
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelError, "e2"}, {"ch", "c2"}}, "task-1", "")
			checkWrites(t, sv, cfg, []pw{{"task-1", checkpointer.ChannelError, "e1"}, {"task-1", "ch", "c1"}})
		}},
		{"error_and_interrupt_once_each", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelError, map[string]any{"error": "ValueError", "message": "bad"}}}, "task-1", "")
			mustPutWrites(t, sv, cfg, []wr{{checkpointer.ChannelInterrupt, []any{map[string]any{"value": "approve?", "id": "i-1"}}}}, "task-2", "")
			checkWrites(t, sv, cfg, []pw{
				{"task-1", checkpointer.ChannelError, map[string]any{"error": "ValueError", "message": "bad"}},
				{"task-2", checkpointer.ChannelInterrupt, []any{map[string]any{"value": "approve?", "id": "i-1"}}},
			})
		}},
		{"value_kinds", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			vals := []any{nil, true, int64(-7), 2.5, "s", []byte("raw\x00bytes"), []any{"a", int64(1)}, map[string]any{"k": map[string]any{"n": nil}}}
			ws := make([]wr, len(vals))
			want := make([]pw, len(vals))
			for i, v := range vals {
				ws[i] = wr{"ch", v}
				want[i] = pw{"task", "ch", v}
			}
			mustPutWrites(t, sv, cfg, ws, "task", "")
			checkWrites(t, sv, cfg, want)
		}},
		{"namespace_isolation", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("writes")
			other := "other:2"
			cp := newCheckpoint(0, nil, nil)
			c1 := mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, nil)
			c2 := mustPut(t, sv, cfgOf(thread, other, ""), cp, nil, nil) // same id, other namespace
			mustPutWrites(t, sv, c1, []wr{{"ch", "mine"}}, "task", "")
			mustPutWrites(t, sv, c2, []wr{{"ch", "theirs"}}, "task", "")
			checkWrites(t, sv, c1, []pw{{"task", "ch", "mine"}})
			checkWrites(t, sv, c2, []pw{{"task", "ch", "theirs"}})
		}},
		{"fresh_writes_for_next_checkpoint", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("writes")
			chain := putChain(t, sv, thread, ns, 1)
			mustPutWrites(t, sv, chain[0].cfg, []wr{{"ch", "v"}}, "task", "")
			next := mustPut(t, sv, chain[0].cfg, newCheckpoint(1, nil, nil), nil, nil)
			checkWrites(t, sv, next, nil)
			checkWrites(t, sv, chain[0].cfg, []pw{{"task", "ch", "v"}})
		}},
		{"writes_of_one_checkpoint_only", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("writes")
			chain := putChain(t, sv, thread, ns, 3)
			for i, st := range chain {
				mustPutWrites(t, sv, st.cfg, []wr{{"i", i}}, "task", "")
			}
			for i, st := range chain {
				checkWrites(t, sv, st.cfg, []pw{{"task", "i", i}})
			}
		}},
		{"empty_writes", func(t *testing.T, sv checkpointer.Saver, ns string) {
			cfg := oneCheckpoint(t, sv, ns)
			mustPutWrites(t, sv, cfg, nil, "task", "")
			checkWrites(t, sv, cfg, nil)
		}},
	})
}

func (s *suite) testGetTuple(t *testing.T) {
	s.runNS(t, []nsCase{
		{"unknown_thread", func(t *testing.T, sv checkpointer.Saver, ns string) {
			if tp := mustGet(t, sv, cfgOf(newThreadID("nobody"), ns, "")); tp != nil {
				t.Fatalf("GetTuple of an unknown thread = %+v, want nil", tp)
			}
		}},
		{"unknown_checkpoint_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("get")
			putChain(t, sv, thread, ns, 2)
			if tp := mustGet(t, sv, cfgOf(thread, ns, checkpointer.NewID(0))); tp != nil {
				t.Fatalf("GetTuple of an unknown id = %+v, want nil", tp)
			}
		}},
		{"latest_without_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("get")
			chain := putChain(t, sv, thread, ns, 4)
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), chain[3].want)
		}},
		{"latest_is_greatest_id_not_last_put", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("get")
			early := newCheckpoint(0, nil, nil)
			late := newCheckpoint(1, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), late, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), early, nil, nil)
			if got := mustGetSome(t, sv, cfgOf(thread, ns, "")); got.Config.CheckpointID != late.ID {
				t.Fatalf("latest = %s, want the greatest id %s", got.Config.CheckpointID, late.ID)
			}
		}},
		{"exact_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("get")
			chain := putChain(t, sv, thread, ns, 4)
			for _, st := range chain {
				checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, st.want.id)), st.want)
			}
		}},
		{"first_checkpoint_has_no_parent", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("get")
			chain := putChain(t, sv, thread, ns, 1)
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			if got.ParentConfig != nil {
				t.Fatalf("parent config of the first checkpoint = %+v, want nil", *got.ParentConfig)
			}
			checkTuple(t, got, chain[0].want)
		}},
		{"pending_writes", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("get")
			chain := putChain(t, sv, thread, ns, 2)
			mustPutWrites(t, sv, chain[1].cfg, []wr{{"a", "x"}, {"b", "y"}}, "t2", "")
			mustPutWrites(t, sv, chain[1].cfg, []wr{{"c", "z"}}, "t1", "")
			w := chain[1].want
			w.writes = []pw{{"t1", "c", "z"}, {"t2", "a", "x"}, {"t2", "b", "y"}}
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), w)
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, w.id)), w)
		}},
		{"namespace_respected", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("get")
			other := "other:3"
			mine := putChain(t, sv, thread, ns, 2)
			theirs := putChain(t, sv, thread, other, 3)
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), mine[1].want)
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, other, "")), theirs[2].want)
		}},
		{"ancestors_channels_reconstructed", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// Each checkpoint writes one new channel; the last one reads
			// all of them through their versions (JS validation suite).
			thread := newThreadID("get")
			versions := map[string]string{}
			parent, lastParent := "", ""
			var last *checkpointer.Checkpoint
			for i, ch := range []string{"animals", "fruits", "colors", "numbers"} {
				v := sv.NextVersion("")
				versions[ch] = v
				cp := newCheckpoint(i, map[string]any{ch: []any{ch + "-1", ch + "-2"}}, copyVersions(versions))
				mustPut(t, sv, cfgOf(thread, ns, parent), cp, checkpointer.Metadata{"step": i}, map[string]string{ch: v})
				lastParent = parent
				parent, last = cp.ID, cp
			}
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			w := cloneCheckpoint(last)
			w.ChannelValues = map[string]any{}
			for ch := range versions {
				w.ChannelValues[ch] = []any{ch + "-1", ch + "-2"}
			}
			checkTuple(t, got, want{thread: thread, ns: ns, id: last.ID, parent: lastParent, cp: w, skipWrites: true})
		}},
	})
}

func copyVersions(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
