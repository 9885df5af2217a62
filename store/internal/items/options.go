package items

import (
	"slices"
	"strings"

	"github.com/memvault/memvault/store"
)

// ListNamespaces applies opt to the namespaces that hold items, as a
// backend without its own query language does: match conditions,
// truncation to MaxDepth, deduplication, ordering by the stored dotted form
// (text order, as PostgreSQL sorts the prefix column), then offset and
// limit. opt must have been validated.
func ListNamespaces(all []store.Namespace, opt store.ListNamespacesOptions) []store.Namespace {
	seen := make(map[string]store.Namespace)
	for _, ns := range all {
		if !opt.Matches(ns) {
			continue
		}
		t := opt.Truncate(ns)
		s := t.String()
		if _, ok := seen[s]; !ok {
			seen[s] = t.Clone()
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := []store.Namespace{}
	for i := opt.Offset; i < len(keys) && len(out) < opt.EffectiveLimit(); i++ {
		out = append(out, seen[keys[i]])
	}
	return out
}

// CompareItems orders items as searches without a query return them:
// most recently updated first, then by namespace (stored form) and key.
func CompareItems(a, b *store.Item) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	if c := strings.Compare(a.Namespace.String(), b.Namespace.String()); c != 0 {
		return c
	}
	return strings.Compare(a.Key, b.Key)
}
