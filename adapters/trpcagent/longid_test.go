package trpcagent_test

import (
	"strconv"
	"strings"
	"testing"

	"trpc.group/trpc-go/trpc-agent-go/session"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/store/memstore"
)

// TestLongSessionIDNotEchoed: an update of a session looks it up by an id
// of any length, and ErrSessionNotFound quoted the id whole — a 64 KiB
// request field became a 64 KiB error, bound for logs. It names such an
// id by its length and the limit now (checkpointer.NameID).
func TestLongSessionIDNotEchoed(t *testing.T) {
	st, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := trpcagent.NewSessionService(st, trpcagent.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("S", 64<<10)
	err = svc.UpdateSessionState(t.Context(), session.Key{AppName: "app", UserID: "u", SessionID: huge}, session.StateMap{"k": []byte("v")})
	if err == nil {
		t.Fatal("no error for a missing session")
	}
	if msg := err.Error(); strings.Contains(msg, huge[:64]) || len(msg) > 1000 || !strings.Contains(msg, strconv.Itoa(len(huge))+" bytes") {
		t.Errorf("the session id is not named by its length (%d bytes of error): %.300s", len(msg), msg)
	}
}
