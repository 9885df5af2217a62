package audit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The chain (format 2). Each record's link is SHA-256 over the previous
// record's link and the record's fields; the first record's previous link
// is the genesis, derived from the database id, so a trail chains to one
// database. Linkage needs no key. Each record's MAC is an HMAC-SHA256 of its
// link under the audit key of its epoch; since the link commits to every
// record before it, one MAC authenticates the whole prefix. A key change
// record opens a new epoch: MACed by the new key and by the old one.
//
// Records written before the chain (format 1) carry only a MAC chained to
// the previous MAC under some configured key; they take part in the hash
// chain (their MAC among their fields), so the first format-2 record
// vouches for them, and Verify checks their MACs as it always did.

// Domain labels, so that no hash or MAC of one kind is valid as another.
const (
	labelGenesis = "memvault/audit-genesis/v2"
	labelLink    = "memvault/audit-link/v2"
	// labelLinkPending is the link of a record chained from a pending
	// record: its fields and its pending id.
	labelLinkPending = "memvault/audit-link-pending/v2"
	labelMAC         = "memvault/audit-mac/v2"
	labelKeyID       = "memvault/audit-key-id/v2"
	labelAnchor      = "memvault/audit-anchor/v2"
	labelV1          = "memvault/audit-record/v1"
)

// auditKey is a configured audit key and its public id.
type auditKey struct {
	id   string     // hex, 16 digits: HMAC of a label under the key
	key  []byte     // never printed (Trail's String names ids only)
	macs *sync.Pool // of hash.Hash: HMAC-SHA256 under key, reused
}

func newAuditKey(k []byte) auditKey {
	k = append([]byte(nil), k...)
	m := hmac.New(sha256.New, k)
	m.Write([]byte(labelKeyID))
	return auditKey{id: hex.EncodeToString(m.Sum(nil)[:8]), key: k,
		macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, k) }}}
}

// mac returns the hex HMAC under k of the length-prefixed fields.
func (k *auditKey) mac(fields ...string) string {
	m := k.macs.Get().(hash.Hash)
	m.Reset()
	m.Write(encodeFields(fields...))
	var sum [sha256.Size]byte
	out := hex.EncodeToString(m.Sum(sum[:0]))
	k.macs.Put(m)
	return out
}

// auth is k's authenticator of link, as a record's MAC holds it.
func (k *auditKey) auth(link string) string { return k.id + ":" + k.mac(labelMAC, link) }

// verify reports whether mac is k's MAC of link.
func (k *auditKey) verify(link, mac string) bool {
	return hmac.Equal([]byte(mac), []byte(k.mac(labelMAC, link)))
}

// String returns a description of the trail that names its key ids, never
// its keys.
func (t *Trail) String() string {
	ids := make([]string, len(t.keys))
	for i, k := range t.keys {
		ids[i] = k.id
	}
	return fmt.Sprintf("audit.Trail{database: %q, keys: %v}", t.dbID, ids)
}

// GoString is String: %#v must not print the keys either.
func (t *Trail) GoString() string { return t.String() }

// encodeFields is the fields, each prefixed by its length (uvarint), in
// one buffer: no field can run into the next.
func encodeFields(fields ...string) []byte {
	n := 0
	for _, f := range fields {
		n += binary.MaxVarintLen64 + len(f)
	}
	b := make([]byte, 0, n)
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// genesis is the previous link of a trail's first record.
func genesis(dbID string) string {
	sum := sha256.Sum256(encodeFields(labelGenesis, dbID))
	return hex.EncodeToString(sum[:])
}

// linkOf is r's link after prev; legacyMAC is r's MAC for a format-1
// record, "" for a format-2 one (whose MAC is computed from the link). A
// record chained from a pending record commits to its pending id under a
// label of its own (labelLinkPending), so that the links of every record
// without one — all records chained before memvault kept the ids — stay
// what they were, and no record with an id can pass for one without.
func linkOf(prev string, r *Record, legacyMAC string) string {
	var sum [sha256.Size]byte
	if r.PendingID != "" {
		sum = sha256.Sum256(encodeFields(labelLinkPending, prev, strconv.FormatInt(r.Seq, 10), r.Time.UTC().Format(time.RFC3339Nano),
			r.Principal, r.Op, r.Target, r.Subject, r.KeyID, legacyMAC, r.PendingID))
	} else {
		sum = sha256.Sum256(encodeFields(labelLink, prev, strconv.FormatInt(r.Seq, 10), r.Time.UTC().Format(time.RFC3339Nano),
			r.Principal, r.Op, r.Target, r.Subject, r.KeyID, legacyMAC))
	}
	return hex.EncodeToString(sum[:])
}

// macV1 is a format-1 record's MAC: HMAC-SHA256 under the key over the
// previous record's MAC and the record's fields.
func macV1(k *auditKey, prev string, r *Record) string {
	return k.mac(labelV1, prev, strconv.FormatInt(r.Seq, 10), r.Time.UTC().Format(time.RFC3339Nano),
		r.Principal, r.Op, r.Target, r.Subject, r.KeyID)
}

// authenticator is one "<key id>:<mac>" of a format-2 record's MAC.
type authenticator struct{ id, mac string }

func parseAuths(s string) ([]authenticator, error) {
	out := make([]authenticator, 0, 2)
	for rest, more := s, true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ",")
		id, mac, ok := strings.Cut(p, ":")
		if !ok || len(id) != 16 || len(mac) != 64 || !isHex(id) || !isHex(mac) || len(out) == 2 {
			return nil, errors.New("malformed MAC")
		}
		out = append(out, authenticator{id, mac})
	}
	return out, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func tampered(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrTampered}, args...)...)
}

// unverifiedError is ErrUnverifiable with the reason; it is ErrTampered
// too, since a verifier must not take it for an intact trail.
type unverifiedError struct{ msg string }

func (e *unverifiedError) Error() string   { return ErrUnverifiable.Error() + ": " + e.msg }
func (e *unverifiedError) Unwrap() []error { return []error{ErrUnverifiable, ErrTampered} }

func unverifiable(format string, args ...any) error {
	return &unverifiedError{fmt.Sprintf(format, args...)}
}

// errCatchUp tells append that the last record is in format 1 and its link
// is not known yet.
var errCatchUp = errors.New("audit: the last record's link is not known")

// chain is the writer's half of Table.Append: the records to store after
// last for es, by who at now — a key change record first when the trail's
// last record is under another audit key than the current one. began: the
// data database records that the hash chain began, so the trail must hold
// a hash-chained record already. pendingID is the id of the pending record
// es (one entry) comes from, "" for a direct append: the entry's record
// commits to it.
func (t *Trail) chain(last *Record, es []Entry, now time.Time, who, pendingID string, began bool) ([]Record, error) {
	var seq int64
	var prev, epoch string
	var head []authenticator
	if last == nil {
		if began {
			return nil, tampered("the trail is empty, but the data database records that its hash chain began: " +
				"the trail was wiped or replaced; refusing to start it again (restore it, or see the README to start a new trail on purpose)")
		}
		prev = genesis(t.dbID)
	} else {
		seq = last.Seq
		if last.Link == "" {
			c, changed := t.cursorAt(last)
			if changed {
				return nil, tampered("record %d changed since the writer read it: refusing to extend the trail", last.Seq)
			}
			if c == nil {
				return nil, errCatchUp
			}
			if began && !c.hashed {
				return nil, errNoChain("refusing to extend it")
			}
			prev, epoch = c.link, c.epoch
		} else {
			a, err := parseAuths(last.MAC)
			if err != nil {
				return nil, tampered("the last record (%d) has a malformed MAC: refusing to extend the trail", last.Seq)
			}
			prev, epoch, head = last.Link, a[0].id, a
		}
	}
	cur := &t.keys[0]
	out := make([]Record, 0, len(es)+1)
	if epoch != "" && epoch != cur.id {
		old := t.key(epoch)
		if old == nil {
			return nil, unverifiable("the trail's last record (%d) is under audit key %s, which is not configured: "+
				"the current key cannot vouch for what it cannot check; configure the master key it derives from as a previous key "+
				"(LANGGRAPH_AES_KEY_PREVIOUS) until an audited operation under the new key has recorded the key change", seq, epoch)
		}
		// The new key vouches for every record before the change: check
		// the last one (whose MAC covers them all through its link) first.
		if head != nil && !old.verify(last.Link, head[0].mac) {
			return nil, tampered("the last record (%d) does not match its MAC under audit key %s: refusing to vouch for the trail under the new key", seq, old.id)
		}
		r := Record{Seq: seq + 1, Time: now, Principal: who, Op: OpKeyChange, Target: old.id + " -> " + cur.id}
		r.Link = linkOf(prev, &r, "")
		r.MAC = cur.auth(r.Link) + "," + old.auth(r.Link)
		out = append(out, r)
		seq, prev = r.Seq, r.Link
	}
	for _, e := range es {
		r := Record{Seq: seq + 1, Time: now, Principal: who, Op: e.Op, Target: e.Target, Subject: e.Subject, KeyID: e.KeyID, PendingID: pendingID}
		r.Link = linkOf(prev, &r, "")
		r.MAC = cur.auth(r.Link)
		out = append(out, r)
		seq, prev = r.Seq, r.Link
	}
	return out, nil
}

// errNoChain is the error for a trail of format-1 records only where the
// data database records that the hash chain began.
func errNoChain(then string) error {
	return tampered("the trail holds no hash-chained record, but the data database records that its hash chain began: "+
		"the trail was replaced by one written before the hash chain (another database's, or this one's cut back to before the upgrade); %s", then)
}

// cursorAt returns where catchUp left off if that is last; changed, when
// catchUp left off at last's place but another record was there (records
// are only ever appended: the trail was rewritten since).
func (t *Trail) cursorAt(last *Record) (c *walkState, changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cursor == nil || t.cursor.last != last.Seq {
		return nil, false
	}
	if t.cursor.prevMAC != last.MAC {
		return nil, true
	}
	s := *t.cursor
	return &s, false
}

// catchUp walks the trail from where it last left off (the start, the
// first time) to its end, checking every format-1 record's MAC — the next
// record will vouch for them — and keeps the link of the last. It runs once
// for a trail written by an earlier memvault, and again only after a
// process of an earlier memvault appended.
func (t *Trail) catchUp(ctx context.Context) error {
	w := t.newWalker(true, nil)
	t.mu.Lock()
	if t.cursor != nil {
		w.walkState = *t.cursor
	}
	t.mu.Unlock()
	if err := w.walk(ctx); err != nil {
		return err
	}
	t.mu.Lock()
	s := w.walkState
	t.cursor = &s
	t.mu.Unlock()
	return nil
}

// walkState is where a walk of the trail stands after a record.
type walkState struct {
	last       int64  // the record's sequence number
	link       string // its link, computed
	prevMAC    string // its MAC, which a following format-1 record chains to
	epoch      string // id of the key its epoch is under ("" before format 2)
	epochStart int64  // the epoch's first record
	hashed     bool   // a format-2 record was walked
	v1Key      string // id of the key the last format-1 record before format 2 verified under
}

// walker checks records in order.
type walker struct {
	t *Trail
	walkState
	strict      bool  // the writer's catch-up: format-1 records must verify at once
	n           int64 // records walked
	pendingFrom int64 // first record no MAC has authenticated yet (0: none)
	pendingKey  string
	pending     int64 // how many records since pendingFrom no MAC authenticated
	vouched     int64 // records authenticated by a later record's MAC only
	anchors     *anchorCheck
	began       bool      // the data database records that the hash chain began
	latest      time.Time // the latest time of the records walked
	late        int64     // records of pending records chained more than LateAfter after a later one
	firstLate   int64
}

func (t *Trail) newWalker(strict bool, anchors *anchorCheck) *walker {
	return &walker{t: t, walkState: walkState{link: genesis(t.dbID)}, strict: strict, anchors: anchors}
}

// walk steps through every record after w.last.
func (w *walker) walk(ctx context.Context) error {
	for {
		page, err := w.t.table.Page(ctx, w.last, pageSize)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		for i := range page {
			if err := w.step(&page[i]); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
	}
}

func (w *walker) step(r *Record) error {
	if r.Seq != w.last+1 {
		return tampered("record %d follows record %d", r.Seq, w.last)
	}
	var link string
	var err error
	if r.Link == "" {
		link, err = w.stepV1(r)
	} else {
		link, err = w.stepV2(r)
	}
	if err != nil {
		return err
	}
	if w.anchors != nil {
		if err := w.anchors.at(r.Seq, link); err != nil {
			return err
		}
	}
	// Only a pending record can be withheld: a direct append is made
	// and chained in one transaction. Its lateness is measured against
	// every record chained before it, direct ones included.
	if r.PendingID != "" && r.Time.Add(LateAfter).Before(w.latest) {
		if w.late == 0 {
			w.firstLate = r.Seq
		}
		w.late++
	}
	if r.Time.After(w.latest) {
		w.latest = r.Time
	}
	w.last, w.link, w.prevMAC = r.Seq, link, r.MAC
	w.n++
	return nil
}

// stepV1 checks a format-1 record: before format 2 began, under any
// configured key (as memvault always did); after, under its epoch's key
// only, so that a retired key cannot add records in the old format.
func (w *walker) stepV1(r *Record) (string, error) {
	if r.PendingID != "" {
		// Format 1 predates pending records.
		return "", tampered("record %d (format 1) names a pending record", r.Seq)
	}
	link := linkOf(w.link, r, r.MAC)
	if w.hashed {
		k := w.t.key(w.epoch)
		switch {
		case k == nil && w.strict:
			return "", unverifiable("record %d (format 1) is under audit key %s, which is not configured", r.Seq, w.epoch)
		case k == nil:
			w.pend(r.Seq, w.epoch)
		case !hmac.Equal([]byte(r.MAC), []byte(macV1(k, w.prevMAC, r))):
			return "", tampered("record %d does not match its MAC", r.Seq)
		}
		// A format-1 MAC covers its record and the previous MAC, not
		// the previous records: it vouches for no record still pending.
		return link, nil
	}
	for i := range w.t.keys {
		if hmac.Equal([]byte(r.MAC), []byte(macV1(&w.t.keys[i], w.prevMAC, r))) {
			w.v1Key = w.t.keys[i].id
			return link, nil
		}
	}
	if w.strict {
		return "", tampered("record %d (written by an earlier memvault) does not match its MAC under any configured key: "+
			"the trail cannot be continued (configure the master key it was written under as a previous key, or move the trail aside)", r.Seq)
	}
	w.pend(r.Seq, "")
	return link, nil
}

// stepV2 checks a format-2 record: its MACs under every configured key it
// names, its key against its epoch's, its stored link against the one
// computed from its fields and the records before it.
func (w *walker) stepV2(r *Record) (string, error) {
	first := !w.hashed
	auths, err := parseAuths(r.MAC)
	if err != nil {
		return "", tampered("record %d has a malformed MAC", r.Seq)
	}
	link := linkOf(w.link, r, "")
	var checked []authenticator
	pendKey := auths[0].id
	if r.Op == OpKeyChange {
		if len(auths) != 2 || first || r.Target != auths[1].id+" -> "+auths[0].id {
			return "", tampered("record %d is a malformed key change", r.Seq)
		}
		if auths[1].id != w.epoch {
			return "", tampered("record %d changes the audit key from %s, but the records before it are under %s", r.Seq, auths[1].id, w.epoch)
		}
		checked = auths
	} else {
		if len(auths) != 1 {
			return "", tampered("record %d has a malformed MAC", r.Seq)
		}
		if !first && auths[0].id != w.epoch {
			return "", tampered("record %d is under audit key %s, but the records before it are under %s and no key change comes between", r.Seq, auths[0].id, w.epoch)
		}
		checked = auths
	}
	verified := false
	for _, a := range checked {
		k := w.t.key(a.id)
		if k == nil {
			continue
		}
		if !k.verify(link, a.mac) {
			return "", w.mismatch(r, first)
		}
		verified = true
	}
	if r.Link != link {
		if verified {
			return "", tampered("record %d's stored link was altered", r.Seq)
		}
		return "", w.mismatch(r, first)
	}
	if first || auths[0].id != w.epoch {
		w.epoch, w.epochStart = auths[0].id, r.Seq
	}
	w.hashed = true
	if verified {
		w.authenticated()
	} else {
		w.pend(r.Seq, pendKey)
	}
	return link, nil
}

// mismatch is the error for a record whose fields, or whose predecessors',
// do not yield its MAC or link.
func (w *walker) mismatch(r *Record, first bool) error {
	if first && w.t.dbID != "" {
		return tampered("record %d does not match its MAC: it was edited, or the trail belongs to another database than this one (database id %q)", r.Seq, w.t.dbID)
	}
	return tampered("record %d does not match its MAC", r.Seq)
}

// pend notes that no MAC authenticated record seq (its key, named by key,
// is not configured; "" for a format-1 record): a later format-2 record's
// must.
func (w *walker) pend(seq int64, key string) {
	if w.pendingFrom == 0 {
		w.pendingFrom, w.pendingKey = seq, key
	}
	w.pending++
}

// authenticated notes that a format-2 record's MAC held: through its link
// it authenticates every record before it.
func (w *walker) authenticated() {
	w.vouched += w.pending
	w.pendingFrom, w.pending = 0, 0
}

// finish checks what only the end of the trail shows: an anchor beyond
// it, no hash-chained record although the chain began, records no MAC
// authenticated, a trail that ends under a previous key.
func (w *walker) finish() error {
	if w.anchors != nil {
		if err := w.anchors.finish(w.last); err != nil {
			return err
		}
	}
	if w.began && !w.hashed {
		if w.n == 0 {
			return tampered("the trail is empty, but the data database records that its hash chain began: the trail was wiped or replaced")
		}
		return errNoChain(fmt.Sprintf("records 1–%d do not count as this database's trail", w.last))
	}
	if w.pendingFrom != 0 {
		if w.pendingKey == "" {
			return tampered("record %d does not match its MAC under any configured key", w.pendingFrom)
		}
		return unverifiable("records %d–%d are under audit key %s, which is not configured, and no later record under a configured key vouches for them",
			w.pendingFrom, w.last, w.pendingKey)
	}
	if w.hashed && w.epoch != w.t.keys[0].id {
		return unverifiable("the trail ends under the previous audit key %s (records %d–%d), and nothing under the current key %s vouches for them: "+
			"the trail was cut back to before a key change, or nothing has been recorded since the master key changed "+
			"(then an audited operation, or `memvault audit anchor`, records the key change)",
			w.epoch, w.epochStart, w.last, w.t.keys[0].id)
	}
	// Format 1 has no epochs, but its last record tells under which key
	// the trail was left: a trail rewritten under a previous key (by
	// whoever keeps it) must not pass for one the current key vouches for.
	if !w.hashed && w.n > 0 && w.v1Key != w.t.keys[0].id {
		return unverifiable("the trail (records 1–%d, written by an earlier memvault) ends under the previous audit key %s, and nothing under the current key %s vouches for it: "+
			"it was rewritten under a previous key, or nothing has been recorded since the master key changed "+
			"(then an audited operation, or `memvault audit anchor`, vouches for it under the current key)",
			w.last, w.v1Key, w.t.keys[0].id)
	}
	return nil
}

// Report is what Check found.
type Report struct {
	// Records is how many records were checked.
	Records int64 `json:"records"`
	// Vouched is how many of them are under an audit key that is not
	// configured (retired) and were authenticated by a later record's MAC
	// (a key change's) rather than their own.
	Vouched int64 `json:"vouched"`
	// Anchors is how many anchors the trail was checked against.
	Anchors int `json:"anchors"`
	// Seq and Link are the last record's (0 and the genesis for an empty
	// trail).
	Seq  int64  `json:"seq"`
	Link string `json:"link"`
	// Pending is how many records are durable but not chained yet (see
	// PendingTable), each checked against its MAC; OldestPending is the
	// time of the oldest (zero for none). A pending record older than a
	// few seconds means no chainer ran since it was made (no audited
	// process wrote, or chaining fails): Trail.Flush chains them.
	Pending       int64     `json:"pending"`
	OldestPending time.Time `json:"oldest_pending,omitzero"`
	// Late is how many records chained from pending records were made
	// more than LateAfter before a record chained ahead of them, and
	// FirstLate the first one's sequence number (0 for none). Not an
	// error: a pending row withheld and inserted later shows so, but so
	// does a write that took that long to commit (see the package doc,
	// Pending records); look them up.
	Late      int64 `json:"late"`
	FirstLate int64 `json:"first_late,omitempty"`
}

// Check reads the whole trail in order and checks every record's place,
// link and MAC, its key against its epoch's, and the trail against every
// anchor (none is fine), then the pending records (each holds its MAC and
// names no pending record chained already). It returns what it checked —
// with the records chained late, which is no error (Report.Late) — and
// ErrTampered (possibly also ErrUnverifiable) naming the first thing that
// does not hold.
func (t *Trail) Check(ctx context.Context, anchors []Anchor) (Report, error) {
	ac, err := t.newAnchorCheck(anchors)
	if err != nil {
		return Report{}, err
	}
	w := t.newWalker(false, ac)
	if w.began, err = t.chainBegan(ctx); err != nil {
		return Report{}, err
	}
	err = w.walk(ctx)
	if err == nil {
		err = w.finish()
	}
	rep := w.report(anchors)
	if err == nil {
		err = t.checkAllPending(ctx, &rep)
	}
	return rep, err
}

// checkAllPending checks every pending record's MAC and counts them in
// rep. A record chained while it reads is missed, never counted twice.
func (t *Trail) checkAllPending(ctx context.Context, rep *Report) error {
	pt, ok := t.pendingTable()
	if !ok {
		return nil
	}
	var at time.Time
	var id string
	for {
		page, err := pt.PagePending(ctx, at, id, pageSize)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		for i := range page {
			p := &page[i]
			if err := t.checkPending(p); err != nil {
				return err
			}
			if rep.Pending == 0 {
				rep.OldestPending = p.Time
			}
			rep.Pending += int64(p.Len())
			at, id = p.Time, p.ID
		}
		if len(page) < pageSize {
			return nil
		}
	}
}

// Verify reads the whole trail in order and checks every record's place,
// link and MAC; it returns how many records it checked, and ErrTampered
// naming the first record that does not hold. See Check.
func (t *Trail) Verify(ctx context.Context) (int64, error) {
	r, err := t.Check(ctx, nil)
	return r.Records, err
}
