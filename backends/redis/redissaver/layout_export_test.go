package redissaver

import (
	"context"
	"slices"

	"github.com/memvault/memvault/checkpointer"
)

// LayoutPut is, for BenchmarkLayout, the keys and arguments of the
// script of p (putBatch: KEYS lock, cp, par, hd, ns, id, val and on one
// server the thread index; ARGV token, fence, parent's field, field,
// record, parent, head, id·ns member, thread, then field and record per
// value) and a func running that script as a put does.
func LayoutPut(s *Saver, p *checkpointer.PutRows) (keys []string, args []any, run func(context.Context) error) {
	b, _, err := s.d.putBatch(p)
	if err != nil {
		panic(err)
	}
	// putBatch passes its arguments as *string; the layout variants
	// take them as the strings and records ([]byte) they are.
	argv := slices.Clone(b.argv(""))
	for i, a := range argv {
		if ps, ok := a.(*string); ok {
			argv[i] = *ps
			if i == 4 || i == 6 || (i > 9 && i%2 == 0) {
				argv[i] = []byte(*ps)
			}
		}
	}
	return b.keys, argv, func(ctx context.Context) error {
		r, err := s.d.run(ctx, "", b)
		if err == nil {
			err = replyErr(p.Thread, r)
		}
		return err
	}
}

// PutScriptSource is putScript's source, for variants in BenchmarkLayout.
const PutScriptSource = putScriptSrc

// LayoutWrites is LayoutPut for pending writes (writesBatch: KEYS lock,
// writes set, writes hash, then the thread index on one server; ARGV
// token, fence, upsert, member, thread, "0", then field and record per
// write).
func LayoutWrites(s *Saver, w *checkpointer.WriteRows) (keys []string, args []any, run func(context.Context) error) {
	b := s.d.writesBatch(w)
	argv := slices.Clone(b.argv(""))
	for i, a := range argv {
		if ps, ok := a.(*string); ok {
			argv[i] = *ps
		}
	}
	return b.keys, argv, func(ctx context.Context) error {
		r, err := s.d.run(ctx, "", b)
		if err == nil {
			err = replyErr(w.Thread, r)
		}
		return err
	}
}
