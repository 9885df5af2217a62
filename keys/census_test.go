package keys_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/keys"
)

// TestKeyPage: KeyPage lists every subject's keys in order, a page at a
// time, as the table holds them but without their bytes; an erased
// subject has none left.
func TestKeyPage(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	h := hierarchy(t, filepath.Join(dir, "keys.db"))
	s, err := sqlitesaver.Open(ctx, filepath.Join(dir, "data.db"), sqlitesaver.Options{Serde: h})
	must(t, err)
	defer s.Close()
	for _, th := range []string{"carol:chat", "dave:chat", "erin:chat"} {
		write(t, s, nil, th, nil, "a secret")
	}
	must(t, h.RotateSubject(ctx, "carol"))
	_, err = h.StartErasure(ctx, "dave")
	must(t, err)
	var got []keys.KeyInfo
	after, afterV := "", 0
	for range 10 {
		page, err := h.KeyPage(ctx, after, afterV, 2)
		must(t, err)
		got = append(got, page...)
		if len(page) < 2 {
			break
		}
		after, afterV = page[len(page)-1].Subject, page[len(page)-1].Version
	}
	var subjects []string
	for _, k := range got {
		subjects = append(subjects, k.Subject)
		if k.ID == "" || k.KEK == "" || k.Created.IsZero() {
			t.Errorf("key %+v lacks its id, KEK or time", k)
		}
	}
	if want := []string{"carol", "carol", "erin"}; !reflect.DeepEqual(subjects, want) {
		t.Errorf("KeyPage listed the keys of %v, want %v", subjects, want)
	}
	if got[0].Version != 1 || got[1].Version != 2 {
		t.Errorf("carol's versions %d, %d, want 1, 2", got[0].Version, got[1].Version)
	}
	if e, err := h.Erasure(ctx, "dave"); err != nil || e == nil {
		t.Errorf("dave's erasure record: %v, %v", e, err)
	}
}
