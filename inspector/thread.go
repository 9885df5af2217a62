package inspector

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
)

// threadView is a thread's page: a page of its checkpoints as a timeline,
// and one checkpoint in detail.
type threadView struct {
	ID string
	// NS is the namespace shown; AllNS when every namespace is.
	NS         string
	AllNS      bool
	Namespaces []nsLink
	Timeline   timeline
	Count      int
	Newest     string // link to the first page ("" on it)
	Older      string // link to the next page ("" on the last)
	Selected   *checkpointView
	// Delete links to the confirmation of the thread's deletion (write
	// actions on only).
	Delete string
}

// nsLink is a link to a namespace (of a thread or of the store).
type nsLink struct {
	Name    string
	Link    string
	Current bool
}

// checkpointView is one checkpoint decoded.
type checkpointView struct {
	ID, NS, TS   string
	Step, Source string
	Parent       *cpLink
	Children     []cpLink
	Channels     []channelRow
	Metadata     shown
	Writes       []writeRow
	// WritesCount is how many pending writes the checkpoint has; Writes
	// is one page of them (?wpage=), WritesPager the links around it.
	WritesCount int
	WritesPager pager
	// Fork links to the confirmation of a fork of this checkpoint
	// (write actions on only).
	Fork          string
	HasParent     bool
	ParentMissing bool
	Diff          []diffRow
	Unchanged     int
}

// cpLink is a link to a checkpoint of the thread shown.
type cpLink struct {
	ID, NS, Link string
}

// channelRow is one channel value of a checkpoint.
type channelRow struct {
	Name, Version string
	Value         shown
	Full          string
}

// writeRow is one pending write (or interrupt) of a checkpoint.
type writeRow struct {
	TaskID, Channel, Kind string
	Value                 shown
	Full                  string
}

// diffRow is one channel that differs from the parent checkpoint.
type diffRow struct {
	Channel, Status string
	Old, New        shown
}

// specialChannels names LangGraph's special pending-write channels.
var specialChannels = map[string]string{
	checkpointer.ChannelInterrupt: "interrupt",
	checkpointer.ChannelResume:    "resume",
	checkpointer.ChannelError:     "error",
	checkpointer.ChannelScheduled: "scheduled",
	checkpointer.ChannelTasks:     "send",
}

// thread shows a thread: its checkpoints newest first, a page at a time
// (?before= the last id of the previous page), in every namespace or in
// ?ns=; the checkpoint ?cp= (in ?cpns=), else the newest of the page, in
// detail with a diff against its parent. Listing decrypts: it is recorded
// as a read of the thread.
func (in *Inspector) thread(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	id := q.Get("id")
	if id == "" {
		return "", nil, fmt.Errorf("%w: no thread id (?id=)", ErrBadRequest)
	}
	if err := checkpointer.ValidateThreadID(id); err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	ctx := r.Context()
	v := &threadView{ID: id, NS: q.Get("ns"), AllNS: !q.Has("ns")}
	if in.opt.AllowWrite {
		v.Delete = in.link("/confirm/delete-thread", url.Values{"thread": {id}})
	}
	cfg := &checkpointer.Config{ThreadID: id, CheckpointNS: v.NS}
	opt := checkpointer.ListOptions{AllNamespaces: v.AllNS, Limit: in.opt.PageSize + 1}
	if b := q.Get("before"); b != "" {
		opt.Before = &checkpointer.Config{ThreadID: id, CheckpointID: b}
		nq := cloneValues(q)
		nq.Del("before")
		nq.Del("cp")
		nq.Del("cpns")
		v.Newest = in.link("/thread", nq)
	}
	var tuples []*checkpointer.Tuple
	for t, err := range in.h.Saver.List(ctx, cfg, opt) {
		if err != nil {
			return "", nil, err
		}
		tuples = append(tuples, t)
	}
	slices.SortStableFunc(tuples, func(a, b *checkpointer.Tuple) int {
		return strings.Compare(b.Config.CheckpointID, a.Config.CheckpointID) // newest first
	})
	if len(tuples) > in.opt.PageSize {
		tuples = tuples[:in.opt.PageSize]
		nq := cloneValues(q)
		nq.Set("before", tuples[len(tuples)-1].Config.CheckpointID)
		nq.Del("cp")
		nq.Del("cpns")
		v.Older = in.link("/thread", nq)
	}
	if len(tuples) == 0 && q.Get("before") == "" {
		if !v.AllNS {
			return "", nil, fmt.Errorf("%w: no checkpoint in %s of %s", ErrNotFound, idName("namespace", v.NS), idName("thread", id))
		}
		return "", nil, fmt.Errorf("%w: no checkpoint in %s", ErrNotFound, idName("thread", id))
	}
	v.Count = len(tuples)

	// The namespaces of the page, and a link to each.
	seen := map[string]bool{}
	names := []string{}
	for _, t := range tuples {
		if !seen[t.Config.CheckpointNS] {
			seen[t.Config.CheckpointNS] = true
			names = append(names, t.Config.CheckpointNS)
		}
	}
	if !v.AllNS && !seen[v.NS] {
		names = append(names, v.NS)
	}
	slices.Sort(names)
	v.Namespaces = append(v.Namespaces, nsLink{Name: "all namespaces", Link: in.link("/thread", url.Values{"id": {id}}), Current: v.AllNS})
	for _, n := range names {
		label := n
		if n == "" {
			label = "root graph"
		}
		v.Namespaces = append(v.Namespaces, nsLink{Name: label, Link: in.link("/thread", url.Values{"id": {id}, "ns": {n}}), Current: !v.AllNS && n == v.NS})
	}

	// The selected checkpoint: from the page, else loaded.
	cpID, cpNS := q.Get("cp"), q.Get("cpns")
	var sel *checkpointer.Tuple
	if cpID == "" && len(tuples) > 0 {
		sel = tuples[0]
	}
	for _, t := range tuples {
		if cpID != "" && t.Config.CheckpointID == cpID && t.Config.CheckpointNS == cpNS {
			sel = t
		}
	}
	if sel == nil && cpID != "" {
		t, err := in.h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: id, CheckpointNS: cpNS, CheckpointID: cpID})
		if err != nil {
			return "", nil, err
		}
		if t == nil {
			return "", nil, fmt.Errorf("%w: no %s in %s of %s", ErrNotFound, idName("checkpoint", cpID), idName("namespace", cpNS), idName("thread", id))
		}
		sel = t
	}
	base := url.Values{"id": {id}}
	if !v.AllNS {
		base.Set("ns", v.NS)
	}
	if b := q.Get("before"); b != "" {
		base.Set("before", b)
	}
	v.Timeline = in.layout(tuples, sel, base)
	if sel != nil {
		wpage, err := intParam(q, "wpage")
		if err != nil {
			return "", nil, err
		}
		cv, err := in.checkpoint(ctx, sel, tuples, base, wpage)
		if err != nil {
			return "", nil, err
		}
		v.Selected = cv
	}
	return titleID("Thread", id), v, nil
}

// titleID names an id in a page's title (and its heading): as
// printableText shows it or, longer than checkpointer.MaxIDBytes (a thread
// an earlier version stored, a lookup's key), by its length as the errors
// name it (idName): a 64 KiB thread id made the title and the heading 64
// KiB each.
func titleID(what, id string) string {
	if len(id) > checkpointer.MaxIDBytes {
		return checkpointer.NameID(what, id)
	}
	return what + " " + printableText(id)
}

// cpHref links to checkpoint (ns, id) of the thread, keeping the page.
func (in *Inspector) cpHref(base url.Values, ns, id string) string {
	q := cloneValues(base)
	q.Set("cp", id)
	q.Set("cpns", ns)
	return in.link("/thread", q)
}

// checkpoint decodes t for its page: values, metadata, page wpage of its
// pending writes, the parent and children links, and the diff against the
// parent.
func (in *Inspector) checkpoint(ctx context.Context, t *checkpointer.Tuple, page []*checkpointer.Tuple, base url.Values, wpage int) (*checkpointView, error) {
	max := in.opt.MaxValueBytes
	c := t.Config
	v := &checkpointView{ID: c.CheckpointID, NS: c.CheckpointNS, Metadata: showValue(map[string]any(t.Metadata), max)}
	if in.opt.AllowWrite {
		v.Fork = in.link("/confirm/fork-checkpoint", url.Values{"thread": {c.ThreadID}, "cpns": {c.CheckpointNS}, "cp": {c.CheckpointID}})
	}
	if t.Checkpoint != nil && !t.Checkpoint.TS.IsZero() {
		v.TS = when(t.Checkpoint.TS)
	}
	if s, ok := t.Metadata["step"]; ok {
		v.Step = fmt.Sprint(s)
	}
	if s, ok := t.Metadata["source"].(string); ok {
		v.Source = s
	}
	full := func(extra url.Values) string {
		fq := url.Values{"thread": {c.ThreadID}, "cpns": {c.CheckpointNS}, "cp": {c.CheckpointID}}
		for k, vs := range extra {
			fq[k] = vs
		}
		return in.link("/value", fq)
	}
	if t.Checkpoint != nil {
		for _, name := range slices.Sorted(maps.Keys(t.Checkpoint.ChannelValues)) {
			row := channelRow{Name: name, Version: t.Checkpoint.ChannelVersions[name], Value: showValue(t.Checkpoint.ChannelValues[name], max)}
			if row.Value.Truncated {
				row.Full = full(url.Values{"channel": {name}})
			}
			v.Channels = append(v.Channels, row)
		}
	}
	// A page of the writes: a step fanned out to thousands of tasks
	// leaves thousands of writes on one checkpoint, each a value to
	// decode and render. The page number only selects within the writes
	// the saver returned: it sizes nothing.
	ps := in.opt.PageSize
	v.WritesCount = len(t.PendingWrites)
	lo := min(wpage, len(t.PendingWrites)/ps+1) * ps
	lo = min(lo, len(t.PendingWrites))
	hi := min(lo+ps, len(t.PendingWrites))
	for i := lo; i < hi; i++ {
		w := t.PendingWrites[i]
		row := writeRow{TaskID: w.TaskID, Channel: w.Channel, Kind: specialChannels[w.Channel], Value: showValue(w.Value, max)}
		if row.Value.Truncated {
			row.Full = full(url.Values{"write": {strconv.Itoa(i)}})
		}
		v.Writes = append(v.Writes, row)
	}
	wq := cloneValues(base)
	wq.Set("cp", c.CheckpointID)
	wq.Set("cpns", c.CheckpointNS)
	v.WritesPager = in.writesPager(wq, lo/ps, hi < len(t.PendingWrites))
	for _, o := range page {
		if p := o.ParentConfig; p != nil && p.CheckpointID == c.CheckpointID && o.Config.CheckpointNS == c.CheckpointNS {
			v.Children = append(v.Children, cpLink{ID: o.Config.CheckpointID, NS: o.Config.CheckpointNS, Link: in.cpHref(base, o.Config.CheckpointNS, o.Config.CheckpointID)})
		}
	}
	p := t.ParentConfig
	if p == nil || p.CheckpointID == "" {
		return v, nil
	}
	v.HasParent = true
	v.Parent = &cpLink{ID: p.CheckpointID, NS: c.CheckpointNS, Link: in.cpHref(base, c.CheckpointNS, p.CheckpointID)}
	var parent *checkpointer.Tuple
	for _, o := range page {
		if o.Config.CheckpointID == p.CheckpointID && o.Config.CheckpointNS == c.CheckpointNS {
			parent = o
		}
	}
	if parent == nil {
		var err error
		parent, err = in.h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: c.ThreadID, CheckpointNS: c.CheckpointNS, CheckpointID: p.CheckpointID})
		if err != nil {
			return nil, err
		}
	}
	if parent == nil || parent.Checkpoint == nil || t.Checkpoint == nil {
		v.ParentMissing = true
		return v, nil
	}
	v.Diff, v.Unchanged = diffChannels(parent.Checkpoint.ChannelValues, t.Checkpoint.ChannelValues, max)
	return v, nil
}

// diffChannels compares two checkpoints' channel values: the channels
// added, removed and changed, and how many are the same.
func diffChannels(old, cur map[string]any, max int) ([]diffRow, int) {
	names := slices.Collect(maps.Keys(old))
	for k := range cur {
		if _, ok := old[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var rows []diffRow
	same := 0
	for _, k := range names {
		ov, inOld := old[k]
		nv, inNew := cur[k]
		switch {
		case !inOld:
			rows = append(rows, diffRow{Channel: k, Status: "added", New: showValue(nv, max)})
		case !inNew:
			rows = append(rows, diffRow{Channel: k, Status: "removed", Old: showValue(ov, max)})
		default:
			a, errA := jsonvalue.Marshal(ov)
			b, errB := jsonvalue.Marshal(nv)
			if errA == nil && errB == nil && bytes.Equal(a, b) {
				same++
				continue
			}
			rows = append(rows, diffRow{Channel: k, Status: "changed", Old: showValue(ov, max), New: showValue(nv, max)})
		}
	}
	return rows, same
}

// writesPager is the pager of a checkpoint's pending writes (?wpage=).
func (in *Inspector) writesPager(q url.Values, page int, more bool) pager {
	p := pager{Page: page + 1}
	if page > 0 {
		pq := cloneValues(q)
		pq.Set("wpage", strconv.Itoa(page-1))
		p.Prev = in.link("/thread", pq) + "#writes"
	}
	if more {
		nq := cloneValues(q)
		nq.Set("wpage", strconv.Itoa(page+1))
		p.Next = in.link("/thread", nq) + "#writes"
	}
	return p
}
