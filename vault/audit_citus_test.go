package vault

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestAuditedCitus: an audited vault on a Citus coordinator records its
// writes and reads and verifies: the checkpoint tables are distributed
// and the trail is a table of the coordinator, so a write's record cannot
// be a statement of the write's own (distributed) transaction.
func TestAuditedCitus(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DSN = pgtest.CitusSchemaDSN(t)
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	c.Embeddings = "none"
	c.AuditTable = fmt.Sprintf("audit_%d", time.Now().UnixNano())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	cfg := checkpointer.Config{ThreadID: "citus-audited"}
	for i := range 3 {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"step": i},
			ChannelVersions: map[string]string{"step": h.Saver.NextVersion(fmt.Sprint(i))}}
		if cfg, err = h.Saver.Put(ctx, cfg, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		if err := h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "step", Value: i}}, "task", ""); err != nil {
			t.Fatalf("put_writes %d: %v", i, err)
		}
	}
	if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "citus-audited"}); err != nil || tup == nil {
		t.Fatalf("GetTuple = %v, %v", tup, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	n, err := h.Audit.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Target == "citus-audited" && (r.Op == audit.OpCheckpointWrite || r.Op == audit.OpWritesWrite) {
			writes++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if writes != 6 {
		t.Errorf("the trail (%d records) holds %d records of the thread's 6 writes", n, writes)
	}
}
