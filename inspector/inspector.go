package inspector

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// ErrBadRequest is wrapped by the errors of a request whose parameters are
// invalid (answered 400).
var ErrBadRequest = errors.New("inspector: bad request")

// ErrNotFound is wrapped by the errors of a request for a thread,
// checkpoint, value or item that does not exist (answered 404).
var ErrNotFound = errors.New("inspector: not found")

// DecryptFailedMessage is what a page says when the data it shows does not
// decrypt, whatever the cause: it names no row, channel or key and does not
// echo the backend's error (crypto's own ErrDecrypt is as generic).
const DecryptFailedMessage = "a stored value does not decrypt with the keys loaded (a wrong or missing key, an erased subject, or data changed in the database)"

// DefaultPrincipal is the audit principal of the inspector's reads.
const DefaultPrincipal = "inspector"

// DefaultMaxValueBytes is where a value shown in a list is cut.
const DefaultMaxValueBytes = 4 << 10

// DefaultPageSize is how many rows a page shows.
const DefaultPageSize = 50

// ContentSecurityPolicy is the policy of every response: nothing but the
// inspector's own stylesheet and images; no script, no frame, no form
// posting elsewhere.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure the inspector.
type Options struct {
	// BasePath is the path the handler is mounted under ("" for the root,
	// else such as "/admin/memvault", without a trailing slash); every link
	// starts with it. The handler expects requests with it already
	// stripped (http.StripPrefix).
	BasePath string
	// Principal names who reads, for the audit trail; nil (or a function
	// returning "") records the read as DefaultPrincipal. A team mounting the inspector behind its
	// own authentication returns "inspector:" + the user.
	Principal func(*http.Request) string
	// MaxValueBytes cuts values shown in lists (DefaultMaxValueBytes when
	// 0); the value page shows them up to 1 MiB, and downloads them whole.
	MaxValueBytes int
	// PageSize is how many threads, checkpoints, items or audit records a
	// page shows (DefaultPageSize when 0).
	PageSize int
	// AllowWrite turns on the write actions (delete a thread, fork a
	// checkpoint with changed channel values, erase a data subject): each
	// behind a confirmation page where the target is
	// typed again, POST only, with a CSRF token bound to the session
	// (WithSession) and a Fetch Metadata / Origin check, and recorded in
	// the audit trail under the principal. Off, every action answers 403
	// and no page offers one.
	AllowWrite bool
	// Retention, when set, is the retention configuration the audit page
	// shows (vault.Handle does not carry it; `memvault inspect` passes the
	// configuration's). The inspector applies none of it.
	Retention *Retention
}

// DefaultRetentionSweepInterval is the savers' background sweep interval
// when the configuration sets none (config.Config.RetentionSweepInterval).
const DefaultRetentionSweepInterval = time.Hour

// Retention is the checkpoint retention configuration, as the audit page
// shows it.
type Retention struct {
	// Policy is what a sweep removes.
	Policy checkpointer.RetentionPolicy
	// SweepInterval is how often the background sweeper runs it, as
	// config.Config.RetentionSweepInterval says it: 0 is the default
	// (DefaultRetentionSweepInterval), negative runs none (`memvault
	// threads sweep` does, when run).
	SweepInterval time.Duration
}

// rules says the policy in words, a line per rule.
func (r *Retention) rules() []string {
	var out []string
	if r.Policy.IdleTTL > 0 {
		out = append(out, "threads idle longer than "+r.Policy.IdleTTL.String()+" are deleted whole")
	}
	if r.Policy.KeepLatest > 0 {
		out = append(out, fmt.Sprintf("only the newest %d checkpoints of each thread and namespace are kept", r.Policy.KeepLatest))
	}
	if len(out) == 0 {
		out = append(out, "none: every checkpoint is kept")
	} else if r.SweepInterval >= 0 {
		out = append(out, "the background sweep runs every "+cmp.Or(r.SweepInterval, DefaultRetentionSweepInterval).String())
	} else {
		out = append(out, "no background sweep: `memvault threads sweep` applies it when run")
	}
	return out
}

// Inspector is the inspector's http.Handler.
type Inspector struct {
	h    *vault.Handle
	opt  Options
	tmpl map[string]*template.Template
	mux  *http.ServeMux
	// csrfKey keys the form tokens of the write actions.
	csrfKey []byte
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// New returns the inspector of h. It serves GET and HEAD, and POST for the
// write actions when Options.AllowWrite is set.
func New(h *vault.Handle, opt Options) (*Inspector, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: nil vault handle", ErrBadRequest)
	}
	if opt.MaxValueBytes <= 0 {
		opt.MaxValueBytes = DefaultMaxValueBytes
	}
	if opt.PageSize <= 0 {
		opt.PageSize = DefaultPageSize
	}
	opt.BasePath = strings.TrimRight(opt.BasePath, "/")
	in := &Inspector{h: h, opt: opt, tmpl: map[string]*template.Template{}, csrfKey: make([]byte, 32)}
	if _, err := rand.Read(in.csrfKey); err != nil {
		return nil, err
	}
	funcs := template.FuncMap{
		"text": printableText,
		// utf8 keeps a value sent back in a form as it was, but valid UTF-8.
		"utf8": func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") },
		"link": in.link,
		"add":  func(a, b int) int { return a + b },
	}
	pages, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		name := strings.TrimSuffix(strings.TrimPrefix(p, "templates/"), ".html")
		if name == "layout" || name == "parts" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", p)
		if err != nil {
			return nil, err
		}
		in.tmpl[name] = t
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, in.link("/threads", nil), http.StatusSeeOther)
	})
	mux.HandleFunc("GET /static/{name}", in.static)
	mux.HandleFunc("GET /threads", in.page("threads", in.threads))
	mux.HandleFunc("GET /thread", in.page("thread", in.thread))
	mux.HandleFunc("GET /value", in.page("value", in.value))
	mux.HandleFunc("GET /value.json", in.valueJSON)
	mux.HandleFunc("GET /memories", in.page("memories", in.memories))
	mux.HandleFunc("GET /keys", in.page("keys", in.keys))
	mux.HandleFunc("GET /audit", in.page("audit", in.auditView))
	mux.HandleFunc("GET /confirm/{action}", in.page("confirm", in.confirm))
	mux.HandleFunc("POST /action/{action}", in.act)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		in.fail(w, r, fmt.Errorf("%w: no page %s", ErrNotFound, r.URL.Path))
	})
	in.mux = mux
	return in, nil
}

// ServeHTTP implements http.Handler: the security headers, then the page.
func (in *Inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if fromElsewhere(r) {
		http.Error(w, "403 forbidden: another site's page asked for this one; open the inspector in a tab of its own", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodHead:
		// A HEAD (a link checker, a chat app's preview of a pasted URL)
		// gets the headers and no work: rendering the page would decrypt
		// it and record a read nobody made. Assets are served as to a GET.
		// A path no page serves answers 404 as its GET would: the route
		// is known without reading anything.
		if !in.routed(r) {
			in.fail(w, r, fmt.Errorf("%w: no page %s", ErrNotFound, r.URL.Path))
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			return
		}
	case http.MethodPost:
		if !in.opt.AllowWrite {
			in.fail(w, r, fmt.Errorf("%w: write actions are off (memvault inspect --allow-write turns them on)", ErrWriteForbidden))
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	principal := DefaultPrincipal
	if in.opt.Principal != nil {
		// An empty name would leave the reads unattributed in the trail.
		principal = cmp.Or(in.opt.Principal(r), DefaultPrincipal)
	}
	in.mux.ServeHTTP(w, r.WithContext(audit.WithPrincipal(r.Context(), principal)))
}

// routed reports whether a GET of r's URL reaches a page, not the
// catch-all 404 (nor a redirect of a path the mux cleans).
func (in *Inspector) routed(r *http.Request) bool {
	get := r.Clone(r.Context())
	get.Method = http.MethodGet
	_, pattern := in.mux.Handler(get)
	return pattern != "" && pattern != "/"
}

// static serves an embedded asset. Not http.FileServer: it drops
// Cache-Control from its error responses and lists folders; here a missing
// asset is the inspector's own 404, with every header.
func (in *Inspector) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := fs.ReadFile(staticFS, "static/"+name)
	if err != nil {
		in.fail(w, r, fmt.Errorf("%w: no asset %s", ErrNotFound, name))
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	_, _ = w.Write(b)
}

// fromElsewhere reports whether r is a browser's request, other than a
// top-level navigation, made by a page of another origin (Fetch Metadata).
// SameSite=Strict does not tell ports apart: any server on 127.0.0.1 is the
// same site as the inspector, and its pages would load inspector URLs — as
// images, scripts, fetches — with the session cookie; the responses stay
// unreadable, but each is a decrypting read in the trail under the
// inspector's name. Clients that send no Fetch Metadata (curl, older
// browsers) are not refused.
func fromElsewhere(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "none", "same-origin":
		return false
	}
	return r.Header.Get("Sec-Fetch-Mode") != "navigate" || r.Header.Get("Sec-Fetch-Dest") != "document"
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// pageData is what every page template gets.
type pageData struct {
	Title   string
	Nav     string
	Base    string
	Audited bool
	Write   bool
	View    any
}

// page adapts a view function (which returns the page's title and data) to
// an http.HandlerFunc rendering template name.
func (in *Inspector) page(name string, view func(*http.Request) (string, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		title, data, err := view(r)
		if err != nil {
			in.fail(w, r, err)
			return
		}
		in.render(w, http.StatusOK, name, in.pageData(title, name, data))
	}
}

// pageData is what the layout of a page with view data gets.
func (in *Inspector) pageData(title, nav string, data any) pageData {
	return pageData{Title: title, Nav: nav, Base: in.opt.BasePath, Audited: in.h.Audit != nil, Write: in.opt.AllowWrite, View: data}
}

func (in *Inspector) render(w http.ResponseWriter, status int, name string, d pageData) {
	var buf bytes.Buffer
	if err := in.tmpl[name].Execute(&buf, d); err != nil {
		http.Error(w, "500 rendering the page failed: "+printableText(err.Error()), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders err as an error page: 400 for bad parameters (the
// inspector's own checks, and the saver's and store's invalid-input
// errors), 404 for what does not exist, 500 otherwise; a value that does
// not decrypt is DecryptFailedMessage, whatever the layer that said so.
func (in *Inspector) fail(w http.ResponseWriter, _ *http.Request, err error) {
	err = in.h.ScrubSecrets(err) // a driver's message may quote the DSN
	status, msg := http.StatusInternalServerError, err.Error()
	switch {
	case undecryptable(err):
		msg = DecryptFailedMessage
	case errors.Is(err, ErrBadRequest) || invalidInput(err):
		status = http.StatusBadRequest
	case errors.Is(err, ErrNotFound) || errors.Is(err, vault.ErrNoStore):
		status = http.StatusNotFound
	case errors.Is(err, ErrWriteForbidden):
		status = http.StatusForbidden
	case errors.Is(err, vault.ErrUnsupported):
		status = http.StatusNotImplemented // what this backend lacks (the census on MongoDB, Redis)
	}
	in.render(w, status, "error", in.pageData(http.StatusText(status), "", map[string]any{"Status": status, "Message": msg}))
}

// undecryptable reports whether err is a value that does not open: a
// failed authentication (wrong key, moved or altered ciphertext), a data
// key that does not unwrap, or a subject whose keys were erased.
func undecryptable(err error) bool {
	return errors.Is(err, crypto.ErrDecrypt) || errors.Is(err, keys.ErrUnwrap) || errors.Is(err, keys.ErrSubjectErased)
}

// invalidInput reports whether err is the saver's or the store's refusal of
// an id, namespace, key or option that came from the request.
func invalidInput(err error) bool {
	for _, target := range []error{checkpointer.ErrInvalidID, store.ErrInvalidNamespace, store.ErrInvalidKey,
		store.ErrInvalidFilter, store.ErrInvalidArgument, store.ErrInvalidPath, store.ErrIDTooLong} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// link is the URL of path under BasePath with query q. Every link the
// pages hold is made here: an id can only ever be a query value.
func (in *Inspector) link(path string, q url.Values) string {
	u := url.URL{Path: in.opt.BasePath + path, RawQuery: q.Encode()}
	return u.String()
}
