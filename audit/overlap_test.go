package audit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// readGate is a memory trail table whose appends wait until the saver's
// read has begun, and then fail or succeed as the test says.
type readGate struct {
	*audit.MemoryTable
	readBegan chan struct{}
	fail      error
}

func (g *readGate) Append(ctx context.Context, chain func(*audit.Record) ([]audit.Record, error)) error {
	// A guard against the old order (the read waiting for the record, the
	// record for the read), which would otherwise hang: no figure of
	// speed is checked.
	guard, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	select {
	case <-g.readBegan:
	case <-guard.Done():
		return errors.New("the read did not begin while its record was being committed")
	}
	if g.fail != nil {
		return g.fail
	}
	return g.MemoryTable.Append(ctx, chain)
}

// watchedSaver tells when GetTuple is called.
type watchedSaver struct {
	checkpointer.Saver
	began chan struct{}
}

func (w *watchedSaver) GetTuple(ctx context.Context, cfg checkpointer.Config) (*checkpointer.Tuple, error) {
	close(w.began)
	return w.Saver.GetTuple(ctx, cfg)
}

// TestGetTupleReadsWhileRecording: the audited GetTuple reads while its
// record commits (the read does not wait for the commit), returns the
// tuple once the record is stored, and returns no tuple, but the record's
// error, when the record fails.
func TestGetTupleReadsWhileRecording(t *testing.T) {
	ctx := context.Background()
	for _, fail := range []error{nil, errors.New("injected commit failure")} {
		inner, err := memsaver.New(memsaver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := checkpointer.Config{ThreadID: "t1"}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
			ChannelValues: map[string]any{"a": 1.0}, ChannelVersions: map[string]string{"a": "1"}}
		if _, err := inner.Put(ctx, cfg, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
			t.Fatal(err)
		}
		began := make(chan struct{})
		g := &readGate{MemoryTable: audit.NewMemoryTable(), readBegan: began, fail: fail}
		tr := trail(t, g)
		s := audit.NewSaver(&watchedSaver{Saver: inner, began: began}, tr, nil)
		tp, err := s.GetTuple(ctx, cfg)
		if fail != nil {
			if !errors.Is(err, fail) || tp != nil {
				t.Fatalf("GetTuple with a failing record = %v, %v; want no tuple and the record's error", tp, err)
			}
			continue
		}
		if err != nil || tp == nil || tp.Checkpoint.ID != cp.ID {
			t.Fatalf("GetTuple = %v, %v", tp, err)
		}
		if n, err := tr.Verify(ctx); err != nil || n != 1 {
			t.Fatalf("Verify = %d, %v; want the read's record", n, err)
		}
	}
}
