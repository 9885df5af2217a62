package inspector

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/vault"
)

// ErrWriteForbidden is wrapped by the refusal of a write action: write
// actions are off (Options.AllowWrite), or the request's CSRF token or
// origin is not the inspector's own (answered 403).
var ErrWriteForbidden = errors.New("inspector: write action refused")

// maxFormBytes bounds the body of a write action's form.
const maxFormBytes = 16 << 10

// sessionKey is the context key of the session id TokenGate sets.
type sessionKey struct{}

// WithSession returns ctx carrying the id of the browser session a
// request belongs to: the inspector binds its CSRF tokens to it, so a
// token seen in one session is worth nothing in another. TokenGate sets
// it; a team mounting the inspector behind its own authentication sets it
// from its own session (it need not be secret: the tokens are keyed by a
// secret of the inspector's).
func WithSession(ctx context.Context, session string) context.Context {
	return context.WithValue(ctx, sessionKey{}, session)
}

func sessionOf(ctx context.Context) string {
	s, _ := ctx.Value(sessionKey{}).(string)
	return s
}

// csrfToken is the form token of r's session: an HMAC of the session id
// under a secret the inspector drew at New.
func (in *Inspector) csrfToken(r *http.Request) string {
	m := hmac.New(sha256.New, in.csrfKey)
	m.Write([]byte("memvault inspector csrf\x00" + sessionOf(r.Context())))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkWrite refuses a write action unless write actions are on, the
// request comes from a page of the inspector's own origin (Fetch Metadata,
// Origin) and its form holds the session's CSRF token (compared in
// constant time). It parses the form (bounded).
func (in *Inspector) checkWrite(w http.ResponseWriter, r *http.Request) error {
	if !in.opt.AllowWrite {
		return fmt.Errorf("%w: write actions are off (memvault inspect --allow-write turns them on)", ErrWriteForbidden)
	}
	// A POST from another origin: even SameSite=Strict sends the cookie
	// from another port of the same host. Browsers send Sec-Fetch-Site on
	// every POST, and Origin; a client that sends neither (curl) still
	// needs the token.
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin":
	default:
		return fmt.Errorf("%w: the form was not sent by an inspector page (Sec-Fetch-Site: %s)", ErrWriteForbidden, printableText(r.Header.Get("Sec-Fetch-Site")))
	}
	// Under the pages' Referrer-Policy: no-referrer a browser sends
	// "Origin: null" with the form; Sec-Fetch-Site, which it sends too,
	// then says where the form came from.
	if o := r.Header.Get("Origin"); o == "null" && r.Header.Get("Sec-Fetch-Site") != "same-origin" {
		return fmt.Errorf("%w: the form's origin is unknown", ErrWriteForbidden)
	} else if o != "" && o != "null" {
		u, err := url.Parse(o)
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if err != nil || u.Host != r.Host || u.Scheme != scheme {
			return fmt.Errorf("%w: the form was sent from another origin", ErrWriteForbidden)
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(in.csrfToken(r))) {
		return fmt.Errorf("%w: the form's token is missing or not this session's (reload the page and try again)", ErrWriteForbidden)
	}
	return nil
}

// action is a write action: what the confirmation page says, what the
// user types to confirm, and what it does.
type action struct {
	// Param names the target's form and query field.
	Param string
	// Title and Warning are what the confirmation page says.
	Title   string
	Warning string
	// check validates the target before the confirmation is shown.
	check func(in *Inspector, target string) error
	// run does it and says what was done.
	run func(in *Inspector, ctx context.Context, target string) (string, error)
}

var actions = map[string]action{
	"delete-thread": {
		Param: "thread",
		Title: "Delete a thread",
		Warning: "This deletes every checkpoint, channel value and pending write of the thread, in every namespace. " +
			"It cannot be undone. The deletion is recorded in the audit trail under your name.",
		check: func(_ *Inspector, id string) error {
			if err := checkpointer.ValidateThreadID(id); err != nil {
				return fmt.Errorf("%w: %w", ErrBadRequest, err)
			}
			return nil
		},
		run: func(in *Inspector, ctx context.Context, id string) (string, error) {
			t, err := in.h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: id})
			if err != nil && !undecryptable(err) {
				return "", err
			}
			if t == nil && err == nil {
				return "", fmt.Errorf("%w: no thread %q", ErrNotFound, printableText(id))
			}
			if err := in.h.Saver.DeleteThread(ctx, id); err != nil {
				return "", err
			}
			return fmt.Sprintf("Thread %s deleted.", printableText(id)), nil
		},
	},
	"erase-subject": {
		Param: "subject",
		Title: "Erase a data subject",
		Warning: "This destroys the subject's data keys, then deletes every thread and memory of the subject " +
			"(what cannot be deleted, such as backups, can no longer be decrypted). It cannot be undone. " +
			"The erasure is recorded in the audit trail under your name, with a signed receipt.",
		check: func(in *Inspector, s string) error {
			if in.h.Keys == nil {
				return fmt.Errorf("%w: %w", ErrBadRequest, vault.ErrNoSubjects)
			}
			if err := in.h.Keys.Subjects().CheckSubject(s); err != nil {
				return fmt.Errorf("%w: %w", ErrBadRequest, err)
			}
			return nil
		},
		run: func(in *Inspector, ctx context.Context, s string) (string, error) {
			rc, err := in.h.Forget(ctx, s)
			if err != nil {
				if errors.Is(err, keys.ErrErasurePending) {
					return fmt.Sprintf("Subject %s: keys destroyed, %d threads and %d items deleted; the erasure is pending (%s): erase it again to finish.",
						printableText(s), rc.Threads, rc.Items, printableText(rc.PendingReason)), nil
				}
				return "", err
			}
			return fmt.Sprintf("Subject %s erased: %d key%s destroyed, %d thread%s and %d item%s deleted.", printableText(s),
				len(rc.KeyIDs), plural(len(rc.KeyIDs)), rc.Threads, plural(rc.Threads), rc.Items, plural(rc.Items)), nil
		},
	},
}

// confirmView is the confirmation page of a write action.
type confirmView struct {
	Name, Title, Warning, Param, Target string
	Action, CSRF, Cancel                string
}

// confirm shows a write action's confirmation: what it does, and a form
// (POST, with the session's CSRF token) where the user types the target
// again. Only with write actions on.
func (in *Inspector) confirm(r *http.Request) (string, any, error) {
	if !in.opt.AllowWrite {
		return "", nil, fmt.Errorf("%w: write actions are off (memvault inspect --allow-write turns them on)", ErrWriteForbidden)
	}
	name := r.PathValue("action")
	a, ok := actions[name]
	if !ok {
		return "", nil, fmt.Errorf("%w: no action %s", ErrNotFound, printableText(name))
	}
	target := r.URL.Query().Get(a.Param)
	if target == "" {
		return "", nil, fmt.Errorf("%w: no %s (?%s=)", ErrBadRequest, a.Param, a.Param)
	}
	if err := a.check(in, target); err != nil {
		return "", nil, err
	}
	return a.Title, &confirmView{Name: name, Title: a.Title, Warning: a.Warning, Param: a.Param, Target: target,
		Action: in.link("/action/"+name, nil), CSRF: in.csrfToken(r), Cancel: in.link("/threads", nil)}, nil
}

// act runs a confirmed write action (POST /action/{action}): the form
// holds the target, the same target typed again, and the CSRF token.
func (in *Inspector) act(w http.ResponseWriter, r *http.Request) {
	if err := in.checkWrite(w, r); err != nil {
		in.fail(w, r, err)
		return
	}
	name := r.PathValue("action")
	a, ok := actions[name]
	if !ok {
		in.fail(w, r, fmt.Errorf("%w: no action %s", ErrNotFound, printableText(name)))
		return
	}
	target := r.PostForm.Get(a.Param)
	if target == "" {
		in.fail(w, r, fmt.Errorf("%w: no %s", ErrBadRequest, a.Param))
		return
	}
	if err := a.check(in, target); err != nil {
		in.fail(w, r, err)
		return
	}
	if r.PostForm.Get("confirm") != target {
		in.fail(w, r, fmt.Errorf("%w: not confirmed: type the %s exactly as shown", ErrBadRequest, a.Param))
		return
	}
	msg, err := a.run(in, r.Context(), target)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	in.render(w, http.StatusOK, "done", in.pageData(a.Title, "", map[string]any{"Message": msg, "Threads": in.link("/threads", nil)}))
}
