package keys

import (
	"context"
	"fmt"
	"slices"
)

// KEKIDs returns the ids of the configured providers' KEKs (Options.
// Providers), the one that wraps new keys first.
func (h *Hierarchy) KEKIDs() []string {
	ids := make([]string, 0, len(h.opts.Providers))
	for _, p := range h.opts.Providers {
		if !slices.Contains(ids, p.KEKID()) {
			ids = append(ids, p.KEKID())
		}
	}
	return ids
}

// UnknownKEKs returns the KEK ids that wrap keys in the key table and that
// no configured provider holds: keys this Hierarchy cannot unwrap. A table
// holding such keys was written under another master key or HSM key than
// the one configured (a wrong LANGGRAPH_AES_KEY, a previous key left out
// after a rotation, a missing HSM provider), and a new subject's key would
// be wrapped under a KEK of its own beside them: vault.Open refuses it.
//
// It reads at most as many distinct KEKs as there are providers, plus
// maxUnknownKEKs: a table with more distinct KEKs than providers holds at
// least one unknown, so none is missed, and what is read names up to
// maxUnknownKEKs of them. A Table without KEKLister is not checked (nil).
func (h *Hierarchy) UnknownKEKs(ctx context.Context) ([]string, error) {
	l, ok := h.opts.Table.(KEKLister)
	if !ok {
		return nil, nil
	}
	keks, err := l.KEKs(ctx, len(h.providers)+maxUnknownKEKs)
	if err != nil {
		return nil, fmt.Errorf("keys: list the key table's KEKs: %w", err)
	}
	var unknown []string
	for _, k := range keks {
		if _, ok := h.providers[k]; !ok && len(unknown) < maxUnknownKEKs {
			unknown = append(unknown, k)
		}
	}
	return unknown, nil
}

// maxUnknownKEKs bounds the unknown KEKs UnknownKEKs names.
const maxUnknownKEKs = 8
