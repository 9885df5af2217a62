package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
)

// deleteSubjectItems deletes subject's store items — under every
// namespace prefix of sub followed by subject — and returns how many it
// deleted. A prefix without "*" names the subject's namespace: one
// DeletePrefix. One with "*" (such as "adk.*.memory", for each app) is
// first resolved: one ListNamespaces per prefix lists the namespaces that
// match it followed by subject, cut there, and each is deleted with one
// DeletePrefix (one per app and layout, not per item). ListNamespaces
// sees live items only, so expired ones are swept first: a namespace
// whose items had all expired would otherwise be missed.
func deleteSubjectItems(ctx context.Context, st store.Store, sub keys.Subjects, subject string) (int, error) {
	prefixes := sub.Namespaces(subject)
	if len(prefixes) == 0 || st == nil {
		return 0, nil
	}
	del, ok := st.(store.PrefixDeleter)
	if !ok {
		return 0, errors.New("the store cannot delete by prefix")
	}
	var nss []store.Namespace
	swept := false
	for _, p := range prefixes {
		if store.Namespace(p).Validate() != nil {
			// A subject such as "alice@example.com" cannot be a label
			// ('.' separates labels), nor can a prefix start with the
			// reserved root "langgraph": no store accepts a write under
			// either, so nothing is there to delete, and asking
			// (DeletePrefix checks Validate) would fail the erasure on
			// every run after its keys were destroyed.
			continue
		}
		if !slices.Contains(p, "*") {
			nss = append(nss, p)
			continue
		}
		if sw, ok := st.(store.Sweeper); ok && !swept {
			if _, err := sw.Sweep(ctx); err != nil {
				return 0, fmt.Errorf("sweep expired items: %w", err)
			}
			swept = true
		}
		found, err := st.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: p, MaxDepth: len(p), Limit: store.MaxLimit})
		if err != nil {
			return 0, fmt.Errorf("list namespaces: %w", err)
		}
		for _, ns := range found {
			// "*" matches every label in a listing, the subject "*" too:
			// keep the namespaces whose label is the subject itself.
			if len(ns) == len(p) && ns[len(ns)-1] == subject {
				nss = append(nss, ns)
			}
		}
	}
	n := 0
	seen := map[string]bool{}
	for _, ns := range nss {
		if key := ns.String(); !seen[key] {
			seen[key] = true
			k, err := del.DeletePrefix(ctx, ns)
			n += k
			if err != nil {
				return n, fmt.Errorf("delete items: %w", err)
			}
		}
	}
	return n, nil
}

// subjectHasItems reports whether the store holds an item that
// deleteSubjectItems would delete: one under a namespace of subject, a
// wildcard prefix's included. Expired items not yet swept count: it only
// decides whether a forget has anything to do.
func subjectHasItems(ctx context.Context, st store.Store, sub keys.Subjects, subject string) (bool, error) {
	if st == nil {
		return false, nil
	}
	for _, p := range sub.Namespaces(subject) {
		if store.Namespace(p).Validate() != nil {
			continue // no store holds an item there (deleteSubjectItems)
		}
		wild := slices.Contains(p, "*")
		limit := 1
		if wild {
			limit = store.MaxLimit
		}
		found, err := st.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: p, MaxDepth: len(p), Limit: limit})
		if err != nil {
			return false, fmt.Errorf("list namespaces: %w", err)
		}
		for _, ns := range found {
			if !wild || len(ns) == len(p) && ns[len(ns)-1] == subject {
				return true, nil
			}
		}
	}
	return false, nil
}
