package trpcagent_test

import (
	"context"
	"strings"
	"testing"

	"trpc.group/trpc-go/trpc-agent-go/event"
	"trpc.group/trpc-go/trpc-agent-go/graph"
	"trpc.group/trpc-go/trpc-agent-go/memory"
	"trpc.group/trpc-go/trpc-agent-go/session"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// TestHostileIDs: app names, user ids, session ids, lineage and checkpoint
// ids a careless caller or an attacker passes — empty, NUL, invalid UTF-8,
// 64 KiB — never panic, and an error never quotes a long id whole (a
// 64 KiB id made a 64 KiB error).
func TestHostileIDs(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("L", 64<<10)
	b := adaptertest.Backends(t, adaptertest.Options{Indexed: true})[1] // sqlite, encrypted
	st := b.Store(t)
	sessions, err := trpcagent.NewSessionService(st, trpcagent.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sessions.Close()
	memories, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer memories.Close()
	saver, err := trpcagent.New(b.Saver(t))
	if err != nil {
		t.Fatal(err)
	}
	short := func(what string, err error) {
		t.Helper()
		if err != nil && (len(err.Error()) > 2048 || strings.Contains(err.Error(), long[:64])) {
			t.Errorf("%s: error of %d bytes quotes a long id: %.120s…", what, len(err.Error()), err)
		}
	}
	for name, id := range map[string]string{"empty": "", "nul": "a\x00b", "bad utf8": "a\xffb", "64KiB": long} {
		for _, key := range []session.Key{{AppName: id, UserID: "u", SessionID: "s"}, {AppName: "a", UserID: id, SessionID: "s"}, {AppName: "a", UserID: "u", SessionID: id}} {
			_, err := sessions.CreateSession(ctx, key, session.StateMap{"k": []byte("v")})
			short(name+": CreateSession", err)
			_, err = sessions.GetSession(ctx, key)
			short(name+": GetSession", err)
			short(name+": UpdateSessionState", sessions.UpdateSessionState(ctx, key, session.StateMap{"k": []byte("w")}))
			sess := session.NewSession(key.AppName, key.UserID, key.SessionID)
			short(name+": AppendEvent", sessions.AppendEvent(ctx, sess, event.New("inv", "user")))
			short(name+": DeleteSession", sessions.DeleteSession(ctx, key))
			uk := memory.UserKey{AppName: key.AppName, UserID: key.UserID}
			short(name+": AddMemory", memories.AddMemory(ctx, uk, "likes tea", nil))
			_, err = memories.SearchMemories(ctx, uk, "tea")
			short(name+": SearchMemories", err)
			short(name+": DeleteMemory", memories.DeleteMemory(ctx, memory.Key{AppName: key.AppName, UserID: key.UserID, MemoryID: id}))
		}
		// graph.CreateCheckpointConfig panics on an empty lineage id; a
		// caller's own map does not.
		cfgOf := func(lineage, cp, ns string) map[string]any {
			c := graph.CreateCheckpointConfig("x", cp, ns)
			c[graph.CfgKeyConfigurable].(map[string]any)[graph.CfgKeyLineageID] = lineage
			return c
		}
		for _, cfg := range []map[string]any{cfgOf(id, "c", ""), cfgOf("l", id, ""), cfgOf("l", "c", id)} {
			_, err := saver.GetTuple(ctx, cfg)
			short(name+": GetTuple", err)
			short(name+": PutWrites", saver.PutWrites(ctx, graph.PutWritesRequest{Config: cfg, Writes: []graph.PendingWrite{{Channel: "x", Value: 1}}}))
			_, err = saver.List(ctx, cfg, nil)
			short(name+": List", err)
		}
		short(name+": DeleteLineage", saver.DeleteLineage(ctx, id))
	}
}
