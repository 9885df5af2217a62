package store_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

// TestReviewS30LabelErrorsCarryNoText (session 30 review): a namespace
// label holding '.' is refused (ErrInvalidNamespace), and the refusal
// quoted the label whole: a caller's 64 KiB label — a user id, a document
// title an app made a label of — came back whole in the error, and in
// every log line that printed it, markup included. Like every other
// identifier error ("The error names the identifier, its length and the
// limit, never its text"), it now names the label by position and length.
func TestReviewS30LabelErrorsCarryNoText(t *testing.T) {
	ctx := t.Context()
	hostile := strings.Repeat("A", 64<<10) + ".s3cr3t<script>alert(1)</script>"
	mem, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	lite, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	ns := store.Namespace{"users", hostile}
	for name, st := range map[string]store.Store{"memory": mem, "sqlite": lite} {
		_, getErr := st.Get(ctx, ns, "k")
		_, searchErr := st.Search(ctx, ns, store.SearchOptions{})
		_, listErr := st.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: ns})
		_, delErr := st.(store.PrefixDeleter).DeletePrefix(ctx, ns)
		for op, err := range map[string]error{
			"Validate":       ns.Validate(),
			"ValidatePrefix": ns.ValidatePrefix(),
			"Get":            getErr,
			"Search":         searchErr,
			"ListNamespaces": listErr,
			"DeletePrefix":   delErr,
		} {
			if !errors.Is(err, store.ErrInvalidNamespace) {
				t.Errorf("%s %s: %v, want store.ErrInvalidNamespace", name, op, err)
				continue
			}
			if msg := err.Error(); len(msg) > 256 || strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "<script>") {
				t.Errorf("%s %s: the error (%d bytes) quotes the label: %.120s…", name, op, len(msg), msg)
			}
		}
	}
}
