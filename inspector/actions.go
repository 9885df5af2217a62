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
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/jsonvalue"
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
	if err := in.writesOn(r); err != nil {
		return err
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

// writesOn refuses a write action, or its confirmation page, unless write
// actions are on and the request names its browser session (WithSession):
// the CSRF token is bound to the session, and without one every user of
// the handler would share one token for the life of the process.
func (in *Inspector) writesOn(r *http.Request) error {
	if !in.opt.AllowWrite {
		return fmt.Errorf("%w: write actions are off (memvault inspect --allow-write turns them on)", ErrWriteForbidden)
	}
	if sessionOf(r.Context()) == "" {
		return fmt.Errorf("%w: write actions need the request's browser session (inspector.WithSession in the authentication in front of the inspector), which binds their CSRF tokens", ErrWriteForbidden)
	}
	return nil
}

// action is a write action: what the confirmation page says, the form
// fields that name its target, and what it does.
type action struct {
	// Params are the fields (form and query) naming the target; the
	// user types the first again to confirm.
	Params []string
	// Values: the confirmation form asks for a JSON object of channel
	// values (a fork's updates).
	Values bool
	// Title and Warning are what the confirmation page says.
	Title   string
	Warning string
	// check validates the target before the confirmation is shown and
	// before the action runs.
	check func(in *Inspector, q url.Values) error
	// run does it and says what was done, with a link to the result.
	run func(in *Inspector, ctx context.Context, form url.Values) (string, string, error)
}

func checkThreadID(id string) error {
	if err := checkpointer.ValidateThreadID(id); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return nil
}

var actions = map[string]action{
	"delete-thread": {
		Params: []string{"thread"},
		Title:  "Delete a thread",
		Warning: "This deletes every checkpoint, channel value and pending write of the thread, in every namespace. " +
			"It cannot be undone. The deletion is recorded in the audit trail under your name.",
		check: func(_ *Inspector, q url.Values) error { return checkThreadID(q.Get("thread")) },
		run: func(in *Inspector, ctx context.Context, form url.Values) (string, string, error) {
			id := form.Get("thread")
			found, err := in.threadExists(ctx, id)
			if err != nil {
				return "", "", err
			}
			if !found {
				return "", "", fmt.Errorf("%w: no %s", ErrNotFound, idName("thread", id))
			}
			if err := in.h.Saver.DeleteThread(ctx, id); err != nil {
				return "", "", err
			}
			if len(id) > checkpointer.MaxIDBytes {
				return "Deleted the " + idName("thread", id) + ".", in.link("/threads", nil), nil
			}
			return fmt.Sprintf("Thread %s deleted.", printableText(id)), in.link("/threads", nil), nil
		},
	},
	"fork-checkpoint": {
		Params: []string{"thread", "cpns", "cp"},
		Values: true,
		Title:  "Fork a checkpoint",
		Warning: "This stores a new checkpoint whose parent is this one, with the channel values you give changed " +
			"(LangGraph's update_state from an earlier checkpoint: the graph resumes from the new branch). " +
			"Nothing is deleted. The write is recorded in the audit trail under your name.",
		check: func(_ *Inspector, q url.Values) error {
			if q.Get("cp") == "" {
				return fmt.Errorf("%w: no checkpoint (cp)", ErrBadRequest)
			}
			return checkThreadID(q.Get("thread"))
		},
		run: func(in *Inspector, ctx context.Context, form url.Values) (string, string, error) {
			updates := map[string]any{}
			if s := strings.TrimSpace(form.Get("values")); s != "" {
				v, err := jsonvalue.Unmarshal([]byte(s))
				m, ok := v.(map[string]any)
				if err != nil || !ok {
					return "", "", fmt.Errorf("%w: the values are not a JSON object of channel values", ErrBadRequest)
				}
				updates = m
			}
			from := checkpointer.Config{ThreadID: form.Get("thread"), CheckpointNS: form.Get("cpns"), CheckpointID: form.Get("cp")}
			cfg, err := threadfile.Fork(ctx, in.h.Saver, from, updates)
			if errors.Is(err, checkpointer.ErrNotFound) {
				return "", "", fmt.Errorf("%w: no %s in %s of %s", ErrNotFound,
					idName("checkpoint", from.CheckpointID), idName("namespace", from.CheckpointNS), idName("thread", from.ThreadID))
			}
			if err != nil {
				return "", "", err
			}
			link := in.cpHref(url.Values{"id": {cfg.ThreadID}}, cfg.CheckpointNS, cfg.CheckpointID)
			return fmt.Sprintf("Forked %s: new checkpoint %s.", idName("checkpoint", from.CheckpointID), printableText(cfg.CheckpointID)), link, nil
		},
	},
	"erase-subject": {
		Params: []string{"subject"},
		Title:  "Erase a data subject",
		Warning: "This destroys the subject's data keys, then deletes every thread and memory of the subject " +
			"(what cannot be deleted, such as backups, can no longer be decrypted). It cannot be undone. " +
			"The erasure is recorded in the audit trail under your name, with a signed receipt.",
		check: func(in *Inspector, q url.Values) error {
			if in.h.Keys == nil {
				return fmt.Errorf("%w: %w", ErrBadRequest, vault.ErrNoSubjects)
			}
			if err := in.h.Keys.Subjects().CheckSubject(q.Get("subject")); err != nil {
				return fmt.Errorf("%w: %w", ErrBadRequest, err)
			}
			return nil
		},
		run: func(in *Inspector, ctx context.Context, form url.Values) (string, string, error) {
			s := form.Get("subject")
			back := in.link("/keys", url.Values{"subject": {s}}) + "#subject"
			// A subject that owns nothing here (a typo in the keys
			// view's search) is refused, recording nothing, as the
			// CLI refuses it without --allow-empty.
			rc, err := in.h.ForgetWith(ctx, s, vault.ForgetOptions{RefuseEmpty: true})
			if errors.Is(err, vault.ErrNothingToForget) {
				return "", "", fmt.Errorf("%w: %w", ErrNotFound, err)
			}
			if err != nil {
				if errors.Is(err, keys.ErrErasurePending) {
					return fmt.Sprintf("Subject %s: keys destroyed, %d threads and %d items deleted; the erasure is pending (%s): erase it again to finish.",
						printableText(s), rc.Threads, rc.Items, printableText(rc.PendingReason)), back, nil
				}
				return "", "", err
			}
			return fmt.Sprintf("Subject %s erased: %d key%s destroyed, %d thread%s and %d item%s deleted.", printableText(s),
				len(rc.KeyIDs), plural(len(rc.KeyIDs)), rc.Threads, plural(rc.Threads), rc.Items, plural(rc.Items)), back, nil
		},
	},
}

// confirmView is the confirmation page of a write action.
type confirmView struct {
	Name, Title, Warning string
	// Fields are the target's fields, sent back hidden; Confirm names the
	// one typed again, Target is its value.
	Fields          []confirmField
	Confirm, Target string
	Values          bool
	Action, CSRF    string
	Cancel          string
}

// confirmField is one hidden field of a confirmation form.
type confirmField struct{ Name, Value string }

// confirm shows a write action's confirmation: what it does, and a form
// (POST, with the session's CSRF token) where the user types the target
// again. Only with write actions on.
func (in *Inspector) confirm(r *http.Request) (string, any, error) {
	if err := in.writesOn(r); err != nil {
		return "", nil, err
	}
	name := r.PathValue("action")
	a, ok := actions[name]
	if !ok {
		return "", nil, fmt.Errorf("%w: no %s", ErrNotFound, idName("action", name))
	}
	q := r.URL.Query()
	target := q.Get(a.Params[0])
	if target == "" {
		return "", nil, fmt.Errorf("%w: no %s (?%s=)", ErrBadRequest, a.Params[0], a.Params[0])
	}
	if err := a.check(in, q); err != nil {
		return "", nil, err
	}
	v := &confirmView{Name: name, Title: a.Title, Warning: a.Warning, Confirm: a.Params[0], Target: target, Values: a.Values,
		Action: in.link("/action/"+name, nil), CSRF: in.csrfToken(r), Cancel: in.link("/threads", nil)}
	for _, p := range a.Params {
		v.Fields = append(v.Fields, confirmField{Name: p, Value: q.Get(p)})
	}
	return a.Title, v, nil
}

// act runs a confirmed write action (POST /action/{action}): the form
// holds the target, its first field typed again, and the CSRF token.
func (in *Inspector) act(w http.ResponseWriter, r *http.Request) {
	if err := in.checkWrite(w, r); err != nil {
		in.fail(w, r, err)
		return
	}
	name := r.PathValue("action")
	a, ok := actions[name]
	if !ok {
		in.fail(w, r, fmt.Errorf("%w: no %s", ErrNotFound, idName("action", name)))
		return
	}
	form := r.PostForm
	target := form.Get(a.Params[0])
	if target == "" {
		in.fail(w, r, fmt.Errorf("%w: no %s", ErrBadRequest, a.Params[0]))
		return
	}
	if err := a.check(in, form); err != nil {
		in.fail(w, r, err)
		return
	}
	if form.Get("confirm") != target {
		in.fail(w, r, fmt.Errorf("%w: not confirmed: type the %s exactly as shown", ErrBadRequest, a.Params[0]))
		return
	}
	msg, link, err := a.run(in, r.Context(), form)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	in.render(w, http.StatusOK, "done", in.pageData(a.Title, "", map[string]any{"Message": msg, "Link": link}))
}

// threadExists reports whether thread id holds a checkpoint in any
// namespace (one whose checkpoints are all in a subgraph's namespace
// too); a checkpoint that cannot be opened still counts.
func (in *Inspector) threadExists(ctx context.Context, id string) (bool, error) {
	for _, err := range in.h.Saver.List(ctx, &checkpointer.Config{ThreadID: id}, checkpointer.ListOptions{AllNamespaces: true, Limit: 1}) {
		if err != nil && !undecryptable(err) {
			return false, err
		}
		return true, nil
	}
	return false, nil
}
