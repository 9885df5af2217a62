package inspector_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/inspector"
	"github.com/memvault/memvault/store"
)

// TestReviewS29AuditViewBySubject (session 29 review): the audit page
// filtered by subject (/audit?subject=dave) applied its own filter,
// rec.Subject == subject, not audit.Filter's: it left out what `audit
// show --subject dave` lists — listings of every thread
// (checkpoint.list "*", which returned dave's checkpoints) and changes
// of unknown targets (a DeletePrefix of ("users") that deleted dave's
// memory). It now applies audit.Filter.Keeps.
func TestReviewS29AuditViewBySubject(t *testing.T) {
	h := subjectVault(t)
	ctx := context.Background()
	for _, err := range h.Saver.List(ctx, nil, checkpointer.ListOptions{AllThreads: true}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := h.Store.(store.PrefixDeleter).DeletePrefix(ctx, store.Namespace{"users"}); err != nil || n == 0 {
		t.Fatalf("DeletePrefix(users) = %d, %v", n, err)
	}
	srv, c := writeServer(t, h, inspector.Options{})
	_, body := get(t, c, srv.URL+"/audit?subject=dave")
	for _, want := range []string{"checkpoint.list", "item.delete"} {
		if !strings.Contains(body, want) {
			t.Errorf("the audit page of subject dave lacks %s (audit show --subject dave lists it)", want)
		}
	}
}
