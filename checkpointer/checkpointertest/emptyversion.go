package checkpointertest

import (
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// testEmptyVersion: an empty channel version — in channel_versions, in the
// new versions or in versions_seen — is refused by Put with
// checkpointer.ErrInvalidVersion and stores nothing, the rule a thread
// file's import applies (checkpointer.ValidateVersion), so that whatever
// Put stores exports and imports. Any other text is a version.
func (s *suite) testEmptyVersion(t *testing.T) {
	sv := s.newSaver(t)
	for what, mutate := range map[string]func(cp *checkpointer.Checkpoint, nv map[string]string){
		"versions_seen": func(cp *checkpointer.Checkpoint, _ map[string]string) {
			cp.VersionsSeen = map[string]map[string]string{"node": {"ch": ""}}
		},
		"channel_versions":  func(cp *checkpointer.Checkpoint, _ map[string]string) { cp.ChannelVersions["other"] = "" },
		"new_versions":      func(cp *checkpointer.Checkpoint, nv map[string]string) { cp.ChannelVersions["ch"], nv["ch"] = "", "" },
		"new_versions_only": func(_ *checkpointer.Checkpoint, nv map[string]string) { nv["ch"] = "" },
		"versions_seen_interrupt": func(cp *checkpointer.Checkpoint, _ map[string]string) {
			cp.VersionsSeen = map[string]map[string]string{"__interrupt__": {"ch": ""}}
		},
	} {
		t.Run(what, func(t *testing.T) {
			thread := newThreadID("emptyver")
			v := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{"ch": "x"}, map[string]string{"ch": v})
			nv := map[string]string{"ch": v}
			mutate(cp, nv)
			_, err := sv.Put(t.Context(), cfgOf(thread, "", ""), cp, nil, nv)
			if !errors.Is(err, checkpointer.ErrInvalidVersion) {
				t.Fatalf("Put with an empty version in %s: %v, want checkpointer.ErrInvalidVersion", what, err)
			}
			if tp := mustGet(t, sv, cfgOf(thread, "", "")); tp != nil {
				t.Fatalf("refused Put stored checkpoint %s", tp.Checkpoint.ID)
			}
		})
	}
	t.Run("any_other_text_is_a_version", func(t *testing.T) {
		thread := newThreadID("textver")
		const v = "v-1f0c3a2e" // an adapter's own version, not LangGraph's number
		cp := newCheckpoint(0, map[string]any{"ch": "x"}, map[string]string{"ch": v})
		cp.VersionsSeen = map[string]map[string]string{"node": {"ch": v}}
		mustPut(t, sv, cfgOf(thread, "", ""), cp, nil, map[string]string{"ch": v})
		got := mustGetSome(t, sv, cfgOf(thread, "", ""))
		if got.Checkpoint.ChannelVersions["ch"] != v || got.Checkpoint.VersionsSeen["node"]["ch"] != v || !Equal("x", got.Checkpoint.ChannelValues["ch"]) {
			t.Fatalf("got %+v", got.Checkpoint)
		}
	})
}
