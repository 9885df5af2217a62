package checkpointer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// ErrInvalidPolicy: a retention policy with a negative TTL or count.
var ErrInvalidPolicy = errors.New("checkpointer: invalid retention policy")

// RetentionPolicy says which checkpoints a Sweep removes. The zero value
// keeps everything; each field set adds a rule, and both may be set.
//
// Nothing is decoded or decrypted to apply it, and no column is added to
// LangGraph's tables: ages are read from the checkpoint ids, which are
// UUIDv6 (time-ordered, sortable as text; see NewID).
type RetentionPolicy struct {
	// IdleTTL deletes, whole, the threads idle longer than it: those
	// whose newest checkpoint (over every namespace) is older than
	// now-IdleTTL, with their values and pending writes. 0 keeps idle
	// threads. A thread is dated only when every checkpoint id it holds
	// is a lowercase UUIDv6 (what LangGraph and memvault write); a thread
	// with any other id (imported, hand-made) cannot be dated and is
	// never deleted for idleness: a sweep must not guess an age.
	IdleTTL time.Duration
	// KeepLatest keeps the newest KeepLatest checkpoints of each (thread,
	// namespace) and removes the older ones, with their pending writes
	// and the values no kept checkpoint references (the values of
	// unchanged channels that older checkpoints wrote stay). "Newest" is
	// checkpoint id order, as List orders, whatever the ids' form. The
	// __pregel_tasks writes a kept v<4 checkpoint reads its pending sends
	// from stay with it. 0 keeps every checkpoint.
	KeepLatest int
}

// Empty reports whether p removes nothing.
func (p RetentionPolicy) Empty() bool { return p.IdleTTL == 0 && p.KeepLatest == 0 }

// Validate refuses negative fields with an error wrapping ErrInvalidPolicy.
func (p RetentionPolicy) Validate() error {
	if p.IdleTTL < 0 {
		return fmt.Errorf("%w: IdleTTL %v is negative (0 keeps idle threads)", ErrInvalidPolicy, p.IdleTTL)
	}
	if p.KeepLatest < 0 {
		return fmt.Errorf("%w: KeepLatest %d is negative (0 keeps every checkpoint)", ErrInvalidPolicy, p.KeepLatest)
	}
	return nil
}

// String spells the policy for logs and reports.
func (p RetentionPolicy) String() string {
	if p.Empty() {
		return "keep everything"
	}
	s := ""
	if p.IdleTTL > 0 {
		s = "delete threads idle for " + p.IdleTTL.String()
	}
	if p.KeepLatest > 0 {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("keep the latest %d checkpoints per namespace", p.KeepLatest)
	}
	return s
}

// SweepOptions tune one Sweep. The zero value deletes, in batches of the
// default size, as of the current time.
type SweepOptions struct {
	// DryRun reports what would be removed and removes nothing. Each batch
	// runs its deletes in a transaction that is rolled back, so the counts
	// are those of a real sweep at that moment.
	DryRun bool
	// BatchThreads is how many threads one transaction handles; 0 means
	// the saver's default: DefaultSweepBatch, or sqlite.SweepBatch on
	// SQLite, whose single writer makes every put wait for a batch. Small batches keep each transaction (and the
	// locks it holds) short, so writers are not stalled by a long sweep.
	BatchThreads int
	// Now is the time IdleTTL counts back from; zero means time.Now().
	Now time.Time
	// Progress, when set, is called after each batch with the report so
	// far (the counts of every batch done, ThreadsScanned among them), on
	// the sweeping goroutine: a long sweep can show how far it got, since
	// the number of threads is not known before the last batch. nil: none.
	Progress func(SweepReport)
}

// DefaultSweepBatch is the number of threads a sweep handles per
// transaction when SweepOptions.BatchThreads is 0.
const DefaultSweepBatch = 100

// SweepReport counts what a Sweep removed (with DryRun: would remove).
type SweepReport struct {
	// ThreadsDeleted counts the idle threads deleted whole.
	ThreadsDeleted int64 `json:"threads_deleted"`
	// Checkpoints, Writes and Blobs count the rows removed, those of the
	// deleted threads included.
	Checkpoints int64 `json:"checkpoints"`
	Writes      int64 `json:"writes"`
	Blobs       int64 `json:"blobs"`
	// ThreadsScanned counts the threads the sweep looked at.
	ThreadsScanned int64 `json:"threads_scanned"`
	// Batches counts the transactions the sweep ran.
	Batches int64 `json:"batches"`
	// DryRun is SweepOptions.DryRun.
	DryRun bool `json:"dry_run"`
}

// Add adds o's counts to r.
func (r *SweepReport) Add(o SweepReport) {
	r.ThreadsDeleted += o.ThreadsDeleted
	r.Checkpoints += o.Checkpoints
	r.Writes += o.Writes
	r.Blobs += o.Blobs
	r.ThreadsScanned += o.ThreadsScanned
	r.Batches += o.Batches
}

// Sweeper is implemented by savers that apply a RetentionPolicy; every
// memvault saver does. Savers also run it in the background when their
// Options set a policy.
type Sweeper interface {
	// Sweep applies policy to every thread, a batch of threads per
	// transaction, and reports what it removed. A policy with negative
	// fields is refused (ErrInvalidPolicy) before anything is touched; an
	// empty policy removes nothing. Threads written while the sweep runs
	// are judged by what each batch's transaction sees.
	Sweep(ctx context.Context, policy RetentionPolicy, opt SweepOptions) (SweepReport, error)
}

// IDFloor returns the smallest UUIDv6 checkpoint id of time t: every id
// NewID makes at t or later sorts at or after it as text, every id made
// earlier before it. Times before the UUID epoch (1582) give the floor of
// the epoch.
func IDFloor(t time.Time) string {
	var ts uint64
	if d := t.Unix(); d > -gregorianOffset/1e7 {
		// 100-ns ticks since 1582, computed in seconds first so that
		// times far from 1970 do not overflow.
		ts = uint64(d+gregorianOffset/1e7)*1e7 + uint64(t.Nanosecond()/100)
	}
	var u [16]byte // clock sequence and node zero: the least id of ts
	binary.BigEndian.PutUint64(u[0:8], ((ts>>12)&0xFFFFFFFFFFFF)<<16|0x6000|(ts&0x0FFF))
	return formatUUID(u)
}

// IsDatableID reports whether id is a lowercase UUIDv6, the ids whose text
// order is their time order: only threads whose ids all are can be found
// idle by a RetentionPolicy.
func IsDatableID(id string) bool {
	if len(id) != 36 || id[14] != '6' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
