package vecindex

import (
	"context"
	"errors"
	"testing"
)

// TestReplacedFillIsDropped: a load that replaces an index whose fill is
// still to start (two searches loading two generations at once) drops
// that fill, so that Close, which waits for every fill, returns. Before,
// the replaced fill stayed counted and Close waited for ever (the test
// binary's timeout: 'panic: test timed out').
func TestReplacedFillIsDropped(t *testing.T) {
	c := New(1<<30, 8)
	reads := 0
	c.SetReader(func(context.Context) (Source, func(), error) {
		reads++
		return nil, nil, errors.New("no storage here")
	})
	for gen := int64(1); gen <= 2; gen++ {
		ix := newCodeIndex(8, nil)
		ix.filling = true
		if !c.installFilling(ix, gen, gen, 1) {
			t.Fatalf("generation %d not installed", gen)
		}
	}
	c.Close()
	if reads != 1 || c.Stats.MidFailed.Load() != 1 {
		t.Fatalf("%d fills read, %d failed; want the last one only", reads, c.Stats.MidFailed.Load())
	}
}
