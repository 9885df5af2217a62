package inspector

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/store"
)

// valueView is the page of one value, shown whole.
type valueView struct {
	What  string
	Where string
	Back  string
	Value shown
}

// value shows one value whole: a checkpoint's channel (?thread= &cpns= &cp=
// &channel=), its pending write (… &write=INDEX), or a memory (?ns=label
// … &key=). Reading it decrypts and is recorded.
func (in *Inspector) value(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	ctx := r.Context()
	if q.Has("key") {
		ns := store.Namespace(q["ns"])
		if len(ns) == 0 {
			return "", nil, fmt.Errorf("%w: a memory needs its namespace (?ns=label&ns=label…)", ErrBadRequest)
		}
		key := q.Get("key")
		it, err := in.h.Store.Get(ctx, ns, key, store.WithRefreshTTL(false))
		if err != nil {
			return "", nil, err
		}
		if it == nil {
			return "", nil, fmt.Errorf("%w: no memory %q in namespace %q", ErrNotFound, printableText(key), printableText(nsText(ns)))
		}
		v := &valueView{What: "memory " + key, Where: "namespace " + nsText(ns), Back: in.link("/memories", nsQuery(ns)), Value: showValue(it.Value, 0)}
		return "Memory " + printableText(key), v, nil
	}
	cfg := checkpointer.Config{ThreadID: q.Get("thread"), CheckpointNS: q.Get("cpns"), CheckpointID: q.Get("cp")}
	if cfg.ThreadID == "" || cfg.CheckpointID == "" {
		return "", nil, fmt.Errorf("%w: a checkpoint value needs ?thread= and ?cp=", ErrBadRequest)
	}
	if err := checkpointer.ValidateThreadID(cfg.ThreadID); err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	t, err := in.h.Saver.GetTuple(ctx, cfg)
	if err != nil {
		return "", nil, err
	}
	if t == nil || t.Checkpoint == nil {
		return "", nil, fmt.Errorf("%w: no checkpoint %q in thread %q", ErrNotFound, printableText(cfg.CheckpointID), printableText(cfg.ThreadID))
	}
	v := &valueView{Where: "checkpoint " + cfg.CheckpointID + " of thread " + cfg.ThreadID, Back: in.cpHref(map[string][]string{"id": {cfg.ThreadID}}, cfg.CheckpointNS, cfg.CheckpointID)}
	switch {
	case q.Has("write"):
		i, err := strconv.Atoi(q.Get("write"))
		if err != nil || i < 0 || i >= len(t.PendingWrites) {
			return "", nil, fmt.Errorf("%w: no pending write %q", ErrNotFound, printableText(q.Get("write")))
		}
		w := t.PendingWrites[i]
		v.What = "pending write to " + w.Channel + " by task " + w.TaskID
		v.Value = showValue(w.Value, 0)
	default:
		ch := q.Get("channel")
		val, ok := t.Checkpoint.ChannelValues[ch]
		if !ok {
			return "", nil, fmt.Errorf("%w: no channel %q", ErrNotFound, printableText(ch))
		}
		v.What = "channel " + ch
		v.Value = showValue(val, 0)
	}
	return "Value", v, nil
}
