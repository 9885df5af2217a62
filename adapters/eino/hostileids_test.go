package eino_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/adapters/eino"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
)

// TestHostileIDs: checkpoint ids and versions a careless caller or an
// attacker passes — empty, NUL, invalid UTF-8, 64 KiB — never panic, an
// error never quotes a long id whole (a 64 KiB id made a 64 KiB error),
// and data set under an accepted id comes back as it was.
func TestHostileIDs(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("L", 64<<10)
	b := adaptertest.Backends(t, adaptertest.Options{})[1] // sqlite, encrypted
	cps, err := eino.NewCheckPointStore(b.Saver(t), eino.Options{KeepLast: 2})
	if err != nil {
		t.Fatal(err)
	}
	short := func(what string, err error) {
		t.Helper()
		if err != nil && len(err.Error()) > 2048 {
			t.Errorf("%s: error of %d bytes: %.120s…", what, len(err.Error()), err)
		}
	}
	data := []byte("state\x00\xff")
	for name, id := range map[string]string{"empty": "", "nul": "a\x00b", "bad utf8": "a\xffb", "64KiB": long} {
		err := cps.Set(ctx, id, data)
		short(name+": Set", err)
		got, ok, gerr := cps.Get(ctx, id)
		short(name+": Get", gerr)
		if err == nil && (!ok || !bytes.Equal(got, data)) {
			t.Errorf("%s: Set accepted, Get gave %q, %v, %v", name, got, ok, gerr)
		}
		_, err = cps.History(ctx, id)
		short(name+": History", err)
		short(name+": Restore", cps.Restore(ctx, id, long))
		short(name+": Delete", cps.Delete(ctx, id))
	}
	if err := cps.Set(ctx, "ok", data); err != nil {
		t.Fatal(err)
	}
	short("Restore of a long version", cps.Restore(ctx, "ok", long))
}
