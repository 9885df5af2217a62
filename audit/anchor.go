package audit

import (
	"bufio"
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// ErrInvalidAnchor is returned for an anchor that is malformed or does not
// match its MAC (the anchor itself was edited or forged).
var ErrInvalidAnchor = errors.New("audit: invalid anchor")

// Anchor is the head of a trail at one moment. Kept where whoever can
// write the trail cannot rewrite it (a file on another host, a log
// shipper, write-once storage), anchors let Check find a trail cut back,
// rolled back or rewritten since: the trail must still hold each anchor's
// record, with the same link.
type Anchor struct {
	// Seq is the sequence number of the head record.
	Seq int64 `json:"seq"`
	// Link is its link, which commits to it and every record before it.
	Link string `json:"link"`
	// DatabaseID is the database the trail is bound to.
	DatabaseID string `json:"database_id"`
	// Time is the head record's time.
	Time time.Time `json:"time"`
	// MAC authenticates the fields above: "<audit key id>:<hex
	// HMAC-SHA256>" under the audit key of the head record.
	MAC string `json:"mac"`
}

func (a *Anchor) fields() []string {
	return []string{labelAnchor, strconv.FormatInt(a.Seq, 10), a.Link, a.DatabaseID, a.Time.UTC().Format(time.RFC3339Nano)}
}

// Anchor appends a record of the anchoring (OpAnchor, by ctx's principal)
// and returns the trail's head: that record. Emit it to a sink the
// database's writers cannot rewrite, as often as you would accept losing
// records undetected (see the package doc).
func (t *Trail) Anchor(ctx context.Context) (Anchor, error) {
	rs, err := t.append(ctx, []Entry{{Op: OpAnchor, Target: "head"}})
	if err != nil {
		return Anchor{}, err
	}
	r := rs[len(rs)-1]
	a := Anchor{Seq: r.Seq, Link: r.Link, DatabaseID: t.dbID, Time: r.Time.UTC()}
	a.MAC = t.keys[0].id + ":" + t.keys[0].mac(a.fields()...)
	return a, nil
}

// ReadAnchors reads anchors written one JSON object a line (as `memvault
// audit anchor` writes them); blank lines are skipped.
func ReadAnchors(r io.Reader) ([]Anchor, error) {
	var out []Anchor
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var a Anchor
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrInvalidAnchor, line, err)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit: read anchors: %w", err)
	}
	return out, nil
}

// VerifyAnchors is Verify that also checks the trail against anchors: it
// fails when the trail is shorter than an anchor, or its record at an
// anchor's place has another link. See Check.
func (t *Trail) VerifyAnchors(ctx context.Context, anchors []Anchor) (int64, error) {
	r, err := t.Check(ctx, anchors)
	return r.Records, err
}

// anchorCheck holds the anchors a walk compares the trail with.
type anchorCheck struct {
	anchors []Anchor
	notes   []string // why an anchor could not be authenticated ("" if it was)
	bySeq   map[int64][]int
	longest int // index of the anchor of the highest record
}

// newAnchorCheck checks each anchor's form, database and MAC (when its key
// is configured); nil for no anchors.
func (t *Trail) newAnchorCheck(as []Anchor) (*anchorCheck, error) {
	if len(as) == 0 {
		return nil, nil
	}
	c := &anchorCheck{anchors: as, notes: make([]string, len(as)), bySeq: map[int64][]int{}}
	for i := range as {
		a := &as[i]
		auths, err := parseAuths(a.MAC)
		if err != nil || len(auths) != 1 || a.Seq < 1 || len(a.Link) != 64 || !isHex(a.Link) {
			return nil, fmt.Errorf("%w: the anchor of record %d taken at %s is malformed", ErrInvalidAnchor, a.Seq, a.Time.Format(time.RFC3339))
		}
		if k := t.key(auths[0].id); k == nil {
			c.notes[i] = fmt.Sprintf(" (the anchor is under audit key %s, which is not configured, so the anchor itself could not be authenticated)", auths[0].id)
		} else if !hmac.Equal([]byte(auths[0].mac), []byte(k.mac(a.fields()...))) {
			return nil, fmt.Errorf("%w: the anchor of record %d taken at %s does not match its MAC: the anchor was edited or forged", ErrInvalidAnchor, a.Seq, a.Time.Format(time.RFC3339))
		}
		if a.DatabaseID != t.dbID {
			return nil, tampered("the anchor of record %d taken at %s is of database %q, not of this one (%q): the wrong anchor file, or the trail's database was replaced%s",
				a.Seq, a.Time.Format(time.RFC3339), a.DatabaseID, t.dbID, c.notes[i])
		}
		c.bySeq[a.Seq] = append(c.bySeq[a.Seq], i)
		if a.Seq > as[c.longest].Seq {
			c.longest = i
		}
	}
	return c, nil
}

// at compares the record seq, of link, with the anchors of that record.
func (c *anchorCheck) at(seq int64, link string) error {
	for _, i := range c.bySeq[seq] {
		if a := &c.anchors[i]; a.Link != link {
			return tampered("record %d differs from the anchor taken at %s: the trail was rolled back and rewritten, or replaced%s",
				seq, a.Time.Format(time.RFC3339), c.notes[i])
		}
	}
	return nil
}

// finish checks that the trail, ending at record last, reaches every
// anchor.
func (c *anchorCheck) finish(last int64) error {
	if a := &c.anchors[c.longest]; a.Seq > last {
		return tampered("the trail ends at record %d, but the anchor taken at %s saw record %d: records were cut off the end, or the trail was rolled back%s",
			last, a.Time.Format(time.RFC3339), a.Seq, c.notes[c.longest])
	}
	return nil
}
