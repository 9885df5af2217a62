package adk

import (
	"slices"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/store"
)

// SubjectNamespaces returns the namespace prefixes under which the
// services with this prefix (nil: {"adk"}) keep each user's data, "*"
// standing for the app: sessions (their state and events), the user's
// "user:" state and her memories, the label after each being the user's.
// Given to per-subject keys (keys.Subjects.NamespacePrefixes, or
// MEMVAULT_SUBJECT_NAMESPACE as the package documentation spells them)
// they seal all of a user's data under the user's own data keys, and
// forgetting Subject(user) erases it. When the session and memory services
// have different prefixes, give the prefixes of both.
func SubjectNamespaces(prefix store.Namespace) [][]string {
	if prefix == nil {
		prefix = store.Namespace{"adk"}
	}
	var out [][]string
	for _, kind := range []string{"sessions", "user-state", "memory"} {
		out = append(out, append(slices.Clone(prefix), "*", kind))
	}
	return out
}

// Subject returns the data subject of an ADK user id under
// SubjectNamespaces: the user id as a namespace label ("." and "%"
// escaped as "%2E" and "%25"), which is what `memvault forget` and
// vault.Handle.Forget take.
func Subject(userID string) string { return labels.Escape(userID) }
