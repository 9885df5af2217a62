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

// noItems is a Rescorer of a search that meets no item.
type noItems struct{}

func (noItems) Estimator(string, []float32) (*Estimator, bool)   { return nil, true }
func (noItems) Resolve(context.Context, []string) error          { return nil }
func (noItems) Rescore(context.Context, []Key) ([]Scored, error) { return nil, nil }
func (noItems) Proxy(score float64) float32                      { return float32(score) }

// TestTopLeavesFillToCaller: a search ranking on an index whose middle
// parts are still to be read does not start their fill: its caller does
// once the search returned (StartFill), so that the fill does not take
// the search's cores while it reads its results. Before, Top started it
// as it returned: '1 fills started by Top'.
func TestTopLeavesFillToCaller(t *testing.T) {
	c := New(1<<30, 8)
	reads := make(chan struct{}, 1)
	c.SetReader(func(context.Context) (Source, func(), error) {
		reads <- struct{}{}
		return nil, nil, errors.New("no storage here")
	})
	ix := newCodeIndex(8, nil)
	ix.filling = true
	if !c.installFilling(ix, 1, 1, 1) {
		t.Fatal("not installed")
	}
	if _, _, err := c.Top(context.Background(), 1, "", noItems{}, 10); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	started := c.fill == nil
	c.mu.Unlock()
	if started {
		t.Fatal("1 fills started by Top")
	}
	c.StartFill()
	<-reads
	c.Close()
}
