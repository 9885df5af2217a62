package pgsaver

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// threadFilter matches a statement's filter on the distribution key a
// distributed PostgreSQL (Citus) would shard these tables by: thread_id
// equal to a parameter, or in a parameter array.
var threadFilter = regexp.MustCompile(`thread_id\s*=\s*(\$\d+|ANY\(\$\d+\))`)

// threadInsert matches an INSERT whose thread_id is one parameter: every
// row it writes goes to that thread's shard.
var threadInsert = regexp.MustCompile(`(?s)^INSERT INTO \S+ \(thread_id,.*?(VALUES \(|SELECT )\$1,`)

// fanOut lists the statements that do not filter by thread_id, each with
// why. On a distributed PostgreSQL they run on every shard; the README's
// scale-out section names them. A new statement must either filter by
// thread_id or be listed here with its reason.
var fanOut = map[string]string{
	"selectTuple": "a fragment: List across threads adds the WHERE (both forms: plain PostgreSQL's and Citus's)",
	"headsRuns":   "DeleteForRuns finds the namespaces of its runs by metadata.run_id across threads (its lock and deletes then name their threads)",
	"threads":     "a retention sweep pages through every thread id (its deletes then name their batch)",
	"threadInfos": "ListThreads aggregates every thread",
	"rowThreads":  "forget pages through every thread holding any row (its deletes then name the subject's threads)",
	// Group commit's rows: a group's puts and writes of any threads, in one
	// statement each. writeRows never sends them on Citus, where each op
	// of a group is still its own statement, naming its thread.
	"putCkptRows":      "group commit's puts, of any threads; not sent on Citus",
	"insertWritesRows": "group commit's pending writes, of any threads; not sent on Citus",
	"upsertWritesRows": "group commit's pending writes, of any threads; not sent on Citus",
}

// TestStatementsFilterByThread: every statement the saver runs names its
// thread(s), so that each routes to one shard (or the shards of its
// threads) when the tables are distributed by thread_id, except the listed
// fan-out statements.
func TestStatementsFilterByThread(t *testing.T) {
	q := buildQueries("")
	v := reflect.ValueOf(q)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		switch f.Name {
		case "schema", "checkpoints", "blobs", "writes": // names, not statements
			continue
		case "records": // audit records, built per shape: never sent on Citus (writeRows)
			continue
		}
		// A field is a statement or an array or map of variants of one
		// (say, with and without a part); every variant is checked.
		stmts := []reflect.Value{v.Field(i)}
		switch v.Field(i).Kind() {
		case reflect.Array:
			stmts = stmts[:0]
			for j := range v.Field(i).Len() {
				stmts = append(stmts, v.Field(i).Index(j))
			}
		case reflect.Map:
			stmts = stmts[:0]
			for _, k := range v.Field(i).MapKeys() {
				stmts = append(stmts, v.Field(i).MapIndex(k))
			}
		}
		_, listed := fanOut[f.Name]
		for _, stmt := range stmts {
			sql := stmt.String()
			if filters := threadFilter.MatchString(sql) || threadInsert.MatchString(sql); filters == listed {
				if listed {
					t.Errorf("%s is listed as fan-out but filters by thread_id: drop it from fanOut", f.Name)
				} else {
					t.Errorf("%s does not filter by thread_id; add the filter or list it in fanOut with why:\n%s", f.Name, sql)
				}
			}
		}
	}

	// List filters by thread exactly when given one; without one it is the
	// explicit all-threads listing.
	s := &Saver{q: q}
	for _, tc := range []struct {
		cfg  *checkpointer.Config
		opt  checkpointer.ListOptions
		want bool
	}{
		{&checkpointer.Config{ThreadID: "t"}, checkpointer.ListOptions{Limit: 10}, true},
		{&checkpointer.Config{ThreadID: "t", CheckpointID: "x"}, checkpointer.ListOptions{AllNamespaces: true}, true},
		{nil, checkpointer.ListOptions{Limit: 10}, false},
	} {
		sql, _, err := s.listQuery(tc.cfg, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := threadFilter.MatchString(sql); got != tc.want {
			t.Errorf("List(%+v, %+v) filters by thread: %v, want %v", tc.cfg, tc.opt, got, tc.want)
		}
	}
}
