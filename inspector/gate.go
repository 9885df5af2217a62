package inspector

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// CookieName starts the name of the session cookie NewTokenGate sets;
// each gate adds a random suffix (TokenGate.CookieName), since browsers
// keep cookies per host, not per port: two inspectors on 127.0.0.1 would
// otherwise overwrite each other's session.
const CookieName = "memvault_inspector"

// TokenGate lets in one browser: the first GET that presents the
// one-time token (/?token=…) gets a session cookie and is redirected to the
// same URL without the token (so it leaves the address bar and the history);
// every request without that cookie answers 401. The token works once:
// whoever later finds it in a shell's scrollback or a process listing gets
// nothing. Both secrets are 32 bytes from crypto/rand and compared in
// constant time.
type TokenGate struct {
	next    http.Handler
	token   string
	session string
	cookie  string
	secure  bool

	mu   sync.Mutex
	used bool
}

// NewTokenGate wraps next and returns the gate and its one-time token.
// secure marks the cookie Secure: pass true when the server speaks TLS.
func NewTokenGate(next http.Handler, secure bool) (*TokenGate, string, error) {
	token, err := randomSecret()
	if err != nil {
		return nil, "", err
	}
	session, err := randomSecret()
	if err != nil {
		return nil, "", err
	}
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		return nil, "", err
	}
	g := &TokenGate{next: next, token: token, session: session, secure: secure,
		cookie: CookieName + "_" + hex.EncodeToString(suffix)}
	return g, token, nil
}

// CookieName returns the name of this gate's session cookie.
func (g *TokenGate) CookieName() string { return g.cookie }

func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ServeHTTP implements http.Handler.
func (g *TokenGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	hasCookie := false
	if c, err := r.Cookie(g.cookie); err == nil {
		hasCookie = subtle.ConstantTimeCompare([]byte(c.Value), []byte(g.session)) == 1
	}
	q := r.URL.Query()
	if q.Has("token") {
		// Only a GET, what a browser opening the URL sends, uses the token:
		// a HEAD from a link checker or a preview would use it up and lock
		// the user out.
		if !hasCookie && (r.Method != http.MethodGet || !g.exchange(q.Get("token"))) {
			unauthorized(w)
			return
		}
		if !hasCookie {
			http.SetCookie(w, &http.Cookie{
				Name: g.cookie, Value: g.session, Path: "/",
				HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteStrictMode,
			})
		}
		q.Del("token")
		// Back to the same page of this host: a path starting "//" (or
		// "/\", which browsers read alike) would send the browser to
		// another host.
		u := url.URL{Path: "/" + strings.TrimLeft(r.URL.Path, "/\\"), RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return
	}
	if !hasCookie {
		unauthorized(w)
		return
	}
	// The session binds the inspector's CSRF tokens (WithSession).
	g.next.ServeHTTP(w, r.WithContext(WithSession(r.Context(), g.session)))
}

// exchange reports whether token is the unused one-time token, and uses it.
func (g *TokenGate) exchange(token string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used || subtle.ConstantTimeCompare([]byte(token), []byte(g.token)) != 1 {
		return false
	}
	g.used = true
	return true
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("401 unauthorized: open the URL `memvault inspect` printed (its token works once)\n"))
}
