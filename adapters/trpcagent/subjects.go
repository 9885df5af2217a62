package trpcagent

import (
	"slices"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/store"
)

// SubjectNamespaces returns the namespace prefixes under which the session
// and memory services with this prefix (nil: {"trpc"}) keep each user's
// data, "*" standing for the app: sessions (state, events, tracks,
// summaries), the user's state (and the key her memories' ids are made
// under: see MemoryService.AddMemory) and her memories, the label after
// each being the user's. Given to per-subject keys
// (keys.Subjects.NamespacePrefixes, or
// MEMVAULT_SUBJECT_NAMESPACE=trpc.*.sessions,trpc.*.user-state,trpc.*.memories)
// they seal all of a user's data under the user's own data keys, and
// forgetting Subject(user) erases it. When the services have different
// prefixes, give the prefixes of both. The CheckpointSaver knows no user:
// see the package documentation.
func SubjectNamespaces(prefix store.Namespace) [][]string {
	if prefix == nil {
		prefix = store.Namespace{"trpc"}
	}
	var out [][]string
	for _, kind := range []string{"sessions", "user-state", "memories"} {
		out = append(out, append(slices.Clone(prefix), "*", kind))
	}
	return out
}

// Subject returns the data subject of a tRPC user id under
// SubjectNamespaces: the user id as a namespace label ("." and "%"
// escaped as "%2E" and "%25"), which is what `memvault forget` and
// vault.Handle.Forget take.
func Subject(userID string) string { return labels.Escape(userID) }
