package pgsaver

import (
	"fmt"
	"slices"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// TestReviewWriteGroupRowsHuge: a group of 1024 puts (GroupCommit's
// largest) and 1024 tasks' writes stores as the same ops one by one.
func TestReviewWriteGroupRowsHuge(t *testing.T) {
	sRows, poolRows, log := tracedSaver(t)
	sOne, poolOne, _ := tracedSaver(t)
	ctx := t.Context()
	var ops []checkpointer.GroupOp
	for i := range 1024 {
		p := rowsPut(fmt.Sprint("h", i%50), fmt.Sprint("c", i), "", fmt.Sprint(i%7), fmt.Sprintf(`{"i": %d}`, i))
		p.Values[0].Data = []byte(fmt.Sprintf(`"%d"`, i%7))
		ops = append(ops, checkpointer.GroupOp{Put: p})
		w := rowsWrites(fmt.Sprint("h", i%50), "c1", fmt.Sprint("task", i%10), fmt.Sprint(i), i%2 == 0)
		w.Rows = append(w.Rows, checkpointer.WriteRow{Task: w.Task, Idx: -1 - i%4, Channel: "__error__", Type: "json", Data: []byte(fmt.Sprint(i))})
		ops = append(ops, checkpointer.GroupOp{Writes: w})
	}
	errs := sRows.driver().WriteGroup(ctx, ops)
	for i, op := range ops {
		var err error
		if op.Put != nil {
			err = sOne.driver().Put(ctx, op.Put)
		} else {
			err = sOne.driver().PutWrites(ctx, op.Writes)
		}
		if outcome(err) != outcome(errs[i]) {
			t.Errorf("op %d: group %v, one by one %v", i, errs[i], err)
		}
	}
	sent := log.Take()
	t.Logf("statements sent: %d (rows puts %d)", len(sent), len(slices.DeleteFunc(slices.Clone(sent), func(q string) bool { return q != sRows.q.putCkptRows })))
	if a, b := dumpTables(t, poolRows), dumpTables(t, poolOne); !slices.Equal(a, b) {
		t.Errorf("tables differ: %d rows vs %d", len(a), len(b))
	}
}
