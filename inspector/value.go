package inspector

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/store"
)

// valuePageBytes is where even the value page cuts a value: past it, a
// page is tens of megabytes of HTML a browser struggles with (a 100 MB
// value made a ~230 MB page); the download link gives the whole value.
const valuePageBytes = 1 << 20

// valueView is the page of one value, whole up to valuePageBytes.
type valueView struct {
	What  string
	Where string
	Back  string
	Value shown
	// Download links to the whole value as a JSON file, when it is cut.
	Download string
}

// found is the value a /value or /value.json request names, and how to
// describe it.
type found struct {
	Title, What, Where, Back string
	Value                    any
}

// value shows one value: a checkpoint's channel (?thread= &cpns= &cp=
// &channel=), its pending write (… &write=INDEX), or a memory (?ns=label
// … &key=). Reading it decrypts and is recorded.
func (in *Inspector) value(r *http.Request) (string, any, error) {
	f, err := in.find(r)
	if err != nil {
		return "", nil, err
	}
	v := &valueView{What: f.What, Where: f.Where, Back: f.Back, Value: showValue(f.Value, valuePageBytes)}
	if v.Value.Truncated {
		v.Download = in.link("/value.json", r.URL.Query())
	}
	return f.Title, v, nil
}

// valueJSON serves the value /value would show as a JSON attachment: the
// way to read one too large for a page. The browser saves it and renders
// nothing; the read is recorded like the page's.
func (in *Inspector) valueJSON(w http.ResponseWriter, r *http.Request) {
	f, err := in.find(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	raw, err := jsonvalue.Marshal(f.Value)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="memvault-value.json"`)
	_, _ = w.Write(raw)
}

// find reads the value a request names (see value).
func (in *Inspector) find(r *http.Request) (*found, error) {
	q := r.URL.Query()
	ctx := r.Context()
	if q.Has("key") {
		ns := store.Namespace(q["ns"])
		if len(ns) == 0 {
			return nil, fmt.Errorf("%w: a memory needs its namespace (?ns=label&ns=label…)", ErrBadRequest)
		}
		if err := in.h.NeedStore(); err != nil {
			return nil, err
		}
		key := q.Get("key")
		it, err := in.h.Store.Get(ctx, ns, key, store.WithRefreshTTL(false))
		if err != nil {
			return nil, err
		}
		if it == nil {
			return nil, fmt.Errorf("%w: no %s in %s", ErrNotFound, idName("memory", key), idName("namespace", nsText(ns)))
		}
		return &found{Title: titleID("Memory", key), What: "memory " + key, Where: "namespace " + nsText(ns),
			Back: in.link("/memories", nsQuery(ns)), Value: it.Value}, nil
	}
	cfg := checkpointer.Config{ThreadID: q.Get("thread"), CheckpointNS: q.Get("cpns"), CheckpointID: q.Get("cp")}
	if cfg.ThreadID == "" || cfg.CheckpointID == "" {
		return nil, fmt.Errorf("%w: a checkpoint value needs ?thread= and ?cp=", ErrBadRequest)
	}
	if err := checkpointer.ValidateThreadID(cfg.ThreadID); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	t, err := in.h.Saver.GetTuple(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if t == nil || t.Checkpoint == nil {
		return nil, fmt.Errorf("%w: no %s in %s", ErrNotFound, idName("checkpoint", cfg.CheckpointID), idName("thread", cfg.ThreadID))
	}
	f := &found{Title: "Value", Where: "checkpoint " + cfg.CheckpointID + " of thread " + cfg.ThreadID,
		Back: in.cpHref(map[string][]string{"id": {cfg.ThreadID}}, cfg.CheckpointNS, cfg.CheckpointID)}
	if q.Has("write") {
		i, err := strconv.Atoi(q.Get("write"))
		if err != nil || i < 0 || i >= len(t.PendingWrites) {
			return nil, fmt.Errorf("%w: no %s", ErrNotFound, idName("pending write", q.Get("write")))
		}
		w := t.PendingWrites[i]
		f.What, f.Value = "pending write to "+w.Channel+" by task "+w.TaskID, w.Value
		return f, nil
	}
	ch := q.Get("channel")
	val, ok := t.Checkpoint.ChannelValues[ch]
	if !ok {
		return nil, fmt.Errorf("%w: no %s", ErrNotFound, idName("channel", ch))
	}
	f.What, f.Value = "channel "+ch, val
	return f, nil
}
