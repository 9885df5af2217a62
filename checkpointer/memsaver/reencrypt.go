package memsaver

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/reencrypt"
)

// ErrCannotReencrypt is returned by Reencrypt when the saver's serializer
// cannot re-encrypt values (it does not encrypt).
var ErrCannotReencrypt = errors.New("memory: serializer cannot re-encrypt values")

// valueRef names one stored value: a blob (write == nil) or a write.
type valueRef struct {
	thread, ns string
	blob       chanVersion
	cpID       string
	write      *taskIdx
}

// Reencrypt implements checkpointer.Reencrypter: every channel value and
// pending write not sealed under the serializer's primary key (and cipher)
// is sealed again, bound to the same location. Values written meanwhile are
// left alone. A value that does not decrypt stops the run with the error.
func (s *InMemorySaver) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	var stats reencrypt.Stats
	if !s.codec.CanReencrypt() {
		return stats, fmt.Errorf("%w (%T)", ErrCannotReencrypt, s.Serde())
	}
	batch := opt.BatchSize
	if batch <= 0 {
		batch = 500
	}

	s.st.mu.RLock()
	var refs []valueRef
	for thread, t := range s.st.threads {
		for ns, n := range t {
			for k := range n.blobs {
				refs = append(refs, valueRef{thread: thread, ns: ns, blob: k})
			}
			for id, ws := range n.writes {
				for k := range ws {
					refs = append(refs, valueRef{thread: thread, ns: ns, cpID: id, write: &k})
				}
			}
		}
	}
	s.st.mu.RUnlock()

	total := int64(len(refs))
	for i, ref := range refs {
		if i%batch == 0 {
			if err := ctx.Err(); err != nil {
				return stats, fmt.Errorf("memory: %w", err)
			}
		}
		rewritten, err := s.reencryptOne(ctx, ref, opt.DryRun)
		if err != nil {
			return stats, err
		}
		stats.Scanned++
		if rewritten {
			stats.Rewritten++
		}
		if opt.Progress != nil && (stats.Scanned%int64(batch) == 0 || stats.Scanned == total) {
			opt.Progress(stats.Scanned, total)
		}
	}
	return stats, nil
}

// reencryptOne re-seals one value outside the lock and stores the result
// if the value was not replaced in the meantime.
func (s *InMemorySaver) reencryptOne(ctx context.Context, ref valueRef, dryRun bool) (bool, error) {
	s.st.mu.RLock()
	b, channel, ok := s.lookupLocked(ref)
	s.st.mu.RUnlock()
	if !ok {
		return false, nil // deleted since the snapshot
	}
	var at binding.Location = binding.Blob{Thread: ref.thread, NS: ref.ns, Channel: ref.blob.channel, Version: ref.blob.version}
	if ref.write != nil {
		at = binding.Write{Thread: ref.thread, NS: ref.ns, Checkpoint: ref.cpID, Task: ref.write.task, Idx: ref.write.idx, Channel: channel}
	}
	typ, data, changed, err := s.codec.Reencrypt(ctx, s.codec.Row(nil, at, b.typ, b.data))
	if err != nil {
		return false, fmt.Errorf("memory: re-encrypt %s: %w", describe(ref), err)
	}
	if !changed || dryRun {
		return changed, nil
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	cur, _, ok := s.lookupLocked(ref)
	if !ok || cur.typ != b.typ || !bytes.Equal(cur.data, b.data) {
		return false, nil // rewritten by a writer meanwhile
	}
	n := s.st.threads[ref.thread][ref.ns]
	if ref.write == nil {
		n.blobs[ref.blob] = blob{typ, data}
	} else {
		w := *n.writes[ref.cpID][*ref.write]
		w.value = blob{typ, data}
		n.writes[ref.cpID][*ref.write] = &w
	}
	return true, nil
}

func (s *InMemorySaver) lookupLocked(ref valueRef) (b blob, writeChannel string, ok bool) {
	n := s.st.threads[ref.thread][ref.ns]
	if n == nil {
		return blob{}, "", false
	}
	if ref.write == nil {
		b, ok := n.blobs[ref.blob]
		return b, "", ok
	}
	w := n.writes[ref.cpID][*ref.write]
	if w == nil {
		return blob{}, "", false
	}
	return w.value, w.channel, true
}

func describe(ref valueRef) string {
	if ref.write == nil {
		return fmt.Sprintf("channel %q version %s", ref.blob.channel, ref.blob.version)
	}
	return fmt.Sprintf("write (%s, %d) of checkpoint %s", ref.write.task, ref.write.idx, ref.cpID)
}
