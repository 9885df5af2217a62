package keys

import (
	"context"
	"time"
)

// KeyInfo is a data key as a census shows it: who owns it, its version,
// id and wrapping KEK, when it was made — never its bytes, wrapped or not.
type KeyInfo struct {
	Subject string
	Version int
	ID      string
	KEK     string
	Created time.Time
}

// KeyPage lists the key table's keys in (subject, version) order after
// (afterSubject, afterVersion), at most limit of them, without their
// bytes: the census of who has keys (the web inspector's keys view). A
// subject erased has none; Erasure tells its record.
func (h *Hierarchy) KeyPage(ctx context.Context, afterSubject string, afterVersion, limit int) ([]KeyInfo, error) {
	ks, err := h.opts.Table.Page(ctx, afterSubject, afterVersion, limit)
	if err != nil {
		return nil, err
	}
	out := make([]KeyInfo, len(ks))
	for i, k := range ks {
		out[i] = KeyInfo{Subject: k.Subject, Version: k.Version, ID: k.ID, KEK: k.KEK, Created: k.Created}
	}
	return out, nil
}
