package mongosaver

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/checkpointer"
)

// What a steady writer knows. A put reads before it writes: the document
// under its id (an overwrite keeps its parent), its parent (whose values
// the new document copies) and any checkpoint of the namespace already
// holding one of its new (channel, version) keys (which keeps its first
// value). That read is the one round trip a put sends beyond the raw
// driver's single upsert. While this process holds a thread's lease
// without a break (sticky.go: one token), no other memvault writer
// changes the thread — another process asks and waits for a hand-over,
// which drops the entry this knowledge hangs on, and an Update of this
// process takes the lease over (forget) — so what the read would find can
// be known instead:
//
//   - the second put of a namespace under a lease reads, in place of its
//     read, the id and memvault_keys of every checkpoint of the namespace
//     (one query, no values), and the put that follows writes its
//     document: from then on the greatest id and the set of keys are kept
//     up to date by this process's own puts;
//   - the document this process last wrote is kept (up to maxKnownDoc
//     bytes, values not moved out of it);
//   - a put whose id is greater than every stored id (no document to
//     overwrite), whose parent is none or that document, and none of
//     whose new keys is stored, sends its document alone: one round trip,
//     as the raw driver's. Any other put reads as before.
//
// A write that fails forgets the namespace (it may have landed or not).
// Python's and JS's writers take no lease: a thread they continue while
// this process keeps its lease is not seen until the parent named is not
// the one known, which sends the put to the read (their documents have no
// memvault_keys, which the read does not look at either).

// Bounds of what one lease knows: beyond them the namespace is read as
// before. A process keeps at most maxSticky leases, so what it knows is
// bounded too: maxKnownNS namespaces a lease, each with one document of up
// to maxKnownDoc bytes and up to maxKnownKeys keys.
const (
	maxKnownIDs  = 10000     // checkpoints of a namespace scanned for ids and keys
	maxKnownKeys = 4096      // distinct keys kept
	maxKnownDoc  = 256 << 10 // bytes of the last document kept
	maxKnownNS   = 8         // namespaces of a thread known under one lease
)

// putCache is what a lease's holder knows of one namespace of its thread.
type putCache struct {
	// scanned: maxID and keys cover every checkpoint of the namespace.
	scanned bool
	// off: the namespace is too large to know; every put reads.
	off bool
	// maxID is the greatest checkpoint id of the namespace.
	maxID string
	// keys are the memvault_keys of its checkpoints.
	keys map[string]struct{}
	// last is the document this process wrote last, nil when too large
	// or holding moved values.
	last *cpDoc
}

// knownFor returns what e knows of namespace ns, nil when nothing.
func (e *sticky) knownFor(ns string) *putCache {
	if e == nil {
		return nil
	}
	return e.known[ns]
}

// servedWithoutRead reports whether put p can be written without the read
// (see above), scanning the namespace first when it has not been; docs
// are the documents the read would have returned.
func (c *putCache) servedWithoutRead(ctx context.Context, d *driver, p *checkpointer.PutRows) (ok bool, docs []cpDoc, err error) {
	if c == nil || c.off || p.Parent == p.ID {
		return false, nil, nil
	}
	if p.Parent != "" && (c.last == nil || c.last.ID != p.Parent) {
		return false, nil, nil
	}
	if !c.scanned {
		if err := c.scan(ctx, d, p.Thread, p.NS); err != nil {
			return false, nil, err
		}
		if c.off {
			return false, nil, nil
		}
	}
	if p.ID <= c.maxID {
		return false, nil, nil
	}
	for _, v := range p.Values {
		if _, ok := c.keys[valueKey(v.Channel, v.Version)]; ok {
			return false, nil, nil
		}
	}
	if p.Parent != "" {
		docs = []cpDoc{*c.last}
	}
	return true, docs, nil
}

// scan reads the ids and keys of the namespace's checkpoints.
func (c *putCache) scan(ctx context.Context, d *driver, thread, ns string) error {
	cur, err := d.cps.Find(ctx, nsFilter(thread, ns), options.Find().
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: fID, Value: 1}, {Key: fKeys, Value: 1}}).
		SetLimit(maxKnownIDs+1))
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	var docs []struct {
		ID   string   `bson:"checkpoint_id"`
		Keys []string `bson:"memvault_keys"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	if len(docs) > maxKnownIDs {
		c.off = true
		return nil
	}
	c.keys = map[string]struct{}{}
	for _, doc := range docs {
		c.maxID = max(c.maxID, doc.ID)
		for _, k := range doc.Keys {
			c.keys[k] = struct{}{}
		}
	}
	c.scanned = true
	c.off = len(c.keys) > maxKnownKeys
	return nil
}

// wrote records doc, just stored under e's lease: the namespace is known
// from the next put on (a second one scans it first).
func (e *sticky) wrote(doc *cpDoc) {
	c := e.known[doc.NS]
	if c == nil {
		if len(e.known) >= maxKnownNS {
			return
		}
		if e.known == nil {
			e.known = map[string]*putCache{}
		}
		c = &putCache{}
		e.known[doc.NS] = c
	}
	if c.off {
		return
	}
	if c.scanned {
		c.maxID = max(c.maxID, doc.ID)
		for _, k := range doc.Keys {
			c.keys[k] = struct{}{}
		}
		if len(c.keys) > maxKnownKeys {
			c.off, c.keys, c.last = true, nil, nil
			return
		}
	}
	c.last = nil
	size := len(doc.CP)
	for _, v := range doc.Values {
		size += len(v.Data)
	}
	if doc.HasBig == nil && len(doc.BigGens) == 0 && size <= maxKnownDoc {
		c.last = doc
	}
}

// forgetNS drops what e knows of namespace ns: a write to it failed, and
// may or may not have landed.
func (e *sticky) forgetNS(ns string) {
	if e != nil {
		delete(e.known, ns)
	}
}
