package vault

import (
	"context"
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
)

// TestSubjectHasItems: what ForgetOptions.RefuseEmpty asks of the store —
// whether deleteSubjectItems would find an item of the subject — under a
// plain prefix (a deeper namespace too) and a wildcard one, and not for
// another subject whose label only starts the same, nor for a subject no
// namespace can hold.
func TestSubjectHasItems(t *testing.T) {
	ctx := context.Background()
	st, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sub := keys.Subjects{NamespacePrefix: []string{"users"}, NamespacePrefixes: [][]string{{"adk", "*", "memory"}}}
	for _, ns := range []store.Namespace{{"users", "carol", "docs"}, {"adk", "desk", "memory", "dave"}, {"users", "carolyn"}} {
		if err := st.Put(ctx, ns, "k", map[string]any{"v": 1}); err != nil {
			t.Fatal(err)
		}
	}
	for subject, want := range map[string]bool{"carol": true, "dave": true, "carolyn": true, "caro": false, "erin": false, "a.b": false, "*": false} {
		got, err := subjectHasItems(ctx, st, sub, subject)
		if err != nil || got != want {
			t.Errorf("subjectHasItems(%q) = %v, %v; want %v", subject, got, err, want)
		}
	}
	if got, err := subjectHasItems(ctx, nil, sub, "carol"); got || err != nil {
		t.Errorf("no store: %v, %v", got, err)
	}
}
