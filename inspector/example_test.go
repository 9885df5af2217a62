package inspector_test

import (
	"log"
	"net/http"

	"github.com/memvault/memvault/inspector"
	"github.com/memvault/memvault/vault"
)

// requireAdmin stands for the admin server's own authentication.
func requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Admin-User") == "" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Mount the inspector in an admin server, behind its authentication, under
// /admin/memvault/, recording each admin's reads under their own name.
func ExampleNew() {
	var h *vault.Handle // from vault.Open or vault.OpenEnv
	if h == nil {
		return // (this example only shows the wiring)
	}
	in, err := inspector.New(h, inspector.Options{
		BasePath:  "/admin/memvault",
		Principal: func(r *http.Request) string { return "inspector:" + r.Header.Get("X-Admin-User") },
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/memvault/", requireAdmin(http.StripPrefix("/admin/memvault", in)))
	log.Fatal(http.ListenAndServe("127.0.0.1:8081", mux))
}
