package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/platform"
	"google.golang.org/adk/session"

	"github.com/memvault/memvault/adapters/internal/labels"
	"github.com/memvault/memvault/adapters/internal/relocate"
	"github.com/memvault/memvault/store"
)

// ErrStaleSession reports an AppendEvent on a session handle that is no
// longer current: the session changed since the handle was read (another
// process appended to it). Nothing was written; Get the session again.
var ErrStaleSession = errors.New("adk: the session changed since it was read")

// Options configures a SessionService. The zero value is usable.
type Options struct {
	// Prefix is the namespace under which every session lives; nil means
	// {"adk"}.
	Prefix store.Namespace
}

// SessionService is an ADK session.Service on a memvault store. It is safe
// for concurrent use, also by several processes sharing the store.
type SessionService struct {
	st     store.Store
	cas    store.ConditionalPutter
	prefix store.Namespace
}

var _ session.Service = (*SessionService)(nil)

// NewSessionService returns the session service of st, which must be a
// store.ConditionalPutter (every memvault store is).
func NewSessionService(st store.Store, opts Options) (*SessionService, error) {
	cas, ok := st.(store.ConditionalPutter)
	if !ok {
		return nil, fmt.Errorf("adk: store %T has no conditional put", st)
	}
	prefix := opts.Prefix
	if prefix == nil {
		prefix = store.Namespace{"adk"}
	}
	if err := prefix.Validate(); err != nil {
		return nil, fmt.Errorf("adk: prefix: %w", err)
	}
	return &SessionService{st: st, cas: cas, prefix: prefix}, nil
}

func (s *SessionService) ns(names ...string) store.Namespace {
	out := append(store.Namespace(nil), s.prefix...)
	for _, n := range names {
		out = append(out, labels.Escape(n))
	}
	return out
}

func (s *SessionService) sessionsNS(app, user string) store.Namespace {
	return append(s.ns(app), "sessions", labels.Escape(user))
}

func (s *SessionService) appStateNS(app string) store.Namespace {
	return append(s.ns(app), "app-state")
}

// userStatePlace is where a user's "user:" state lives: in a namespace
// of the user's, like her sessions and memories, so that the subject
// prefixes of SubjectNamespaces cover it.
func (s *SessionService) userStatePlace(app, user string) relocate.Place {
	return relocate.Place{Namespace: append(s.ns(app), "user-state", labels.Escape(user)), Key: userStateKey}
}

// oldUserStatePlace is where a user's state lived before it had a
// namespace of the user's: an item keyed by the user id in one namespace
// per app (under no subject, so sealed under the master key). It is read
// while the user has no state where it lives now, and moved from there by
// the next write or by MigrateUserState.
func (s *SessionService) oldUserStatePlace(app, user string) relocate.Place {
	return relocate.Place{Namespace: append(s.ns(app), "user-state"), Key: user}
}

// appStateKey and userStateKey are the keys of the shared state items.
const (
	appStateKey  = "state"
	userStateKey = "state"
)

// record is a session as stored: its own state, its events (as ADK's JSON)
// and a revision that every append moves forward.
type record struct {
	rev     int64
	updated time.Time
	state   map[string]any
	events  []*session.Event
}

func (r *record) value() (map[string]any, error) {
	ev, err := json.Marshal(r.events)
	if err != nil {
		return nil, fmt.Errorf("adk: encode events: %w", err)
	}
	state := r.state
	if state == nil {
		state = map[string]any{}
	}
	return map[string]any{
		"rev":        r.rev,
		"updated_ns": r.updated.UnixNano(),
		"state":      state,
		"events":     ev,
	}, nil
}

func decodeRecord(v map[string]any) (*record, error) {
	r := &record{}
	rev, ok1 := v["rev"].(int64)
	upd, ok2 := v["updated_ns"].(int64)
	ev, ok3 := v["events"].([]byte)
	state, ok4 := v["state"].(map[string]any)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, errors.New("adk: malformed session record")
	}
	r.rev, r.updated, r.state = rev, time.Unix(0, upd), state
	if err := json.Unmarshal(ev, &r.events); err != nil {
		return nil, fmt.Errorf("adk: malformed session events: %w", err)
	}
	return r, nil
}

// splitState divides a state delta as ADK scopes it: "app:" and "user:"
// keys (prefix removed) are shared, "temp:" keys are dropped, the rest
// belongs to the session.
func splitState(delta map[string]any) (app, user, own map[string]any) {
	app, user, own = map[string]any{}, map[string]any{}, map[string]any{}
	for k, v := range delta {
		switch {
		case strings.HasPrefix(k, session.KeyPrefixApp):
			app[strings.TrimPrefix(k, session.KeyPrefixApp)] = v
		case strings.HasPrefix(k, session.KeyPrefixUser):
			user[strings.TrimPrefix(k, session.KeyPrefixUser)] = v
		case strings.HasPrefix(k, session.KeyPrefixTemp):
		default:
			own[k] = v
		}
	}
	return app, user, own
}

// Create implements session.Service: the session is stored only if no
// session of that id exists for the app and user.
func (s *SessionService) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("adk: app_name and user_id are required, got app_name: %q, user_id: %q", req.AppName, req.UserID)
	}
	id := req.SessionID
	if id == "" {
		id = platform.NewUUID(ctx)
	}
	app, user, own := splitState(req.State)
	r := &record{rev: 1, updated: platform.Now(ctx), state: own}
	v, err := r.value()
	if err != nil {
		return nil, err
	}
	err = s.cas.PutIf(ctx, s.sessionsNS(req.AppName, req.UserID), id, v, store.PutCondition{})
	if errors.Is(err, store.ErrConflict) {
		return nil, fmt.Errorf("adk: session %q already exists", id)
	}
	if err != nil {
		return nil, fmt.Errorf("adk: create session: %w", err)
	}
	appState, userState, err := s.mergeShared(ctx, req.AppName, req.UserID, app, user)
	if err != nil {
		return nil, err
	}
	return &session.CreateResponse{Session: newSession(req.AppName, req.UserID, id, r, appState, userState, nil)}, nil
}

// Get implements session.Service.
func (s *SessionService) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return nil, fmt.Errorf("adk: app_name, user_id, session_id are required, got app_name: %q, user_id: %q, session_id: %q", req.AppName, req.UserID, req.SessionID)
	}
	r, _, err := s.load(ctx, req.AppName, req.UserID, req.SessionID)
	if err != nil {
		return nil, err
	}
	appState, userState, err := s.shared(ctx, req.AppName, req.UserID)
	if err != nil {
		return nil, err
	}
	events := r.events
	if req.NumRecentEvents > 0 {
		events = events[max(len(events)-req.NumRecentEvents, 0):]
	}
	if !req.After.IsZero() {
		i := sort.Search(len(events), func(i int) bool { return !events[i].Timestamp.Before(req.After) })
		events = events[i:]
	}
	return &session.GetResponse{Session: newSession(req.AppName, req.UserID, req.SessionID, r, appState, userState, events)}, nil
}

// load reads a session's record and its item's UpdatedAt (the version a
// conditional put compares); a missing session is ErrSessionNotFound.
func (s *SessionService) load(ctx context.Context, app, user, id string) (*record, time.Time, error) {
	it, err := s.st.Get(ctx, s.sessionsNS(app, user), id)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("adk: get session: %w", err)
	}
	if it == nil {
		return nil, time.Time{}, fmt.Errorf("%w: %q", ErrSessionNotFound, id)
	}
	r, err := decodeRecord(it.Value)
	if err != nil {
		return nil, time.Time{}, err
	}
	return r, it.UpdatedAt, nil
}

// List implements session.Service: the sessions of the app, of one user
// or (UserID empty) of every user, without their events.
func (s *SessionService) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req.AppName == "" {
		return nil, fmt.Errorf("adk: app_name is required, got app_name: %q", req.AppName)
	}
	users := []string{req.UserID}
	if req.UserID == "" {
		var err error
		if users, err = s.users(ctx, req.AppName); err != nil {
			return nil, err
		}
	}
	out := []session.Session{}
	appState, _, err := s.shared(ctx, req.AppName, "")
	if err != nil {
		return nil, err
	}
	lister, ok := s.st.(store.Lister)
	if !ok {
		return nil, fmt.Errorf("adk: store %T cannot list items", s.st)
	}
	for _, user := range users {
		userState, err := s.readUserState(ctx, req.AppName, user)
		if err != nil {
			return nil, err
		}
		after := ""
		for {
			page, err := lister.ListItems(ctx, s.sessionsNS(req.AppName, user), store.ListItemsOptions{After: after, Limit: 500})
			if err != nil {
				return nil, fmt.Errorf("adk: list sessions: %w", err)
			}
			for _, it := range page {
				r, err := decodeRecord(it.Value)
				if err != nil {
					return nil, err
				}
				out = append(out, newSession(req.AppName, user, it.Key, r, appState, userState, []*session.Event{}))
			}
			if len(page) < 500 {
				break
			}
			after = page[len(page)-1].Key
		}
	}
	return &session.ListResponse{Sessions: out}, nil
}

// users lists the users that have sessions in app.
func (s *SessionService) users(ctx context.Context, app string) ([]string, error) {
	base := append(s.ns(app), "sessions")
	nss, err := s.st.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: base, MaxDepth: len(base) + 1, Limit: store.MaxLimit})
	if err != nil {
		return nil, fmt.Errorf("adk: list users: %w", err)
	}
	var users []string
	for _, ns := range nss {
		if len(ns) != len(base)+1 {
			continue
		}
		u, err := labels.Unescape(ns[len(ns)-1])
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, nil
}

// Delete implements session.Service; deleting a missing session is not an
// error.
func (s *SessionService) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return fmt.Errorf("adk: app_name, user_id, session_id are required, got app_name: %q, user_id: %q, session_id: %q", req.AppName, req.UserID, req.SessionID)
	}
	if err := s.st.Delete(ctx, s.sessionsNS(req.AppName, req.UserID), req.SessionID); err != nil {
		return fmt.Errorf("adk: delete session: %w", err)
	}
	return nil
}

// AppendEvent implements session.Service: the event (without "temp:" state)
// is stored with the session's state delta in one conditional put of the
// session, which fails with ErrStaleSession when the handle is not current;
// the handle is then brought up to date. Partial events are not stored.
func (s *SessionService) AppendEvent(ctx context.Context, cur session.Session, event *session.Event) error {
	if cur == nil {
		return errors.New("adk: session is nil")
	}
	if event == nil {
		return errors.New("adk: event is nil")
	}
	if event.Partial {
		return nil
	}
	h, ok := cur.(*Session)
	if !ok {
		return fmt.Errorf("adk: unexpected session type %T for session ID %s", cur, cur.ID())
	}
	r, version, err := s.load(ctx, h.app, h.user, h.id)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.rev != h.rev {
		return fmt.Errorf("%w: session %q", ErrStaleSession, h.id)
	}
	app, user, own := splitState(event.Actions.StateDelta)
	stored := withoutTemp(event)
	r.events = append(r.events, stored)
	maps.Copy(r.state, own)
	r.rev++
	r.updated = event.Timestamp
	v, err := r.value()
	if err != nil {
		return err
	}
	err = s.cas.PutIf(ctx, s.sessionsNS(h.app, h.user), h.id, v, store.PutCondition{UpdatedAt: version})
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("%w: session %q", ErrStaleSession, h.id)
	}
	if err != nil {
		return fmt.Errorf("adk: append event: %w", err)
	}
	// The handle follows what was stored; its state also takes the event's
	// "temp:" keys, which live as long as the handle (ADK's rule).
	h.rev, h.updated = r.rev, r.updated
	h.events = append(h.events, stored)
	maps.Copy(h.state, event.Actions.StateDelta)
	if len(app) > 0 || len(user) > 0 {
		if _, _, err := s.mergeShared(ctx, h.app, h.user, app, user); err != nil {
			return fmt.Errorf("adk: the event is stored, its app/user state is not: %w", err)
		}
	}
	return nil
}

// withoutTemp returns event without its "temp:" state keys (a copy when it
// has some).
func withoutTemp(event *session.Event) *session.Event {
	keep := true
	for k := range event.Actions.StateDelta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			keep = false
			break
		}
	}
	if keep {
		return event
	}
	c := *event
	c.Actions.StateDelta = map[string]any{}
	for k, v := range event.Actions.StateDelta {
		if !strings.HasPrefix(k, session.KeyPrefixTemp) {
			c.Actions.StateDelta[k] = v
		}
	}
	return &c
}

// shared reads the app's state (app non-empty) and the user's (user
// non-empty).
func (s *SessionService) shared(ctx context.Context, app, user string) (appState, userState map[string]any, err error) {
	if app != "" {
		if appState, err = s.readState(ctx, s.appStateNS(app), appStateKey); err != nil {
			return nil, nil, err
		}
	}
	if app != "" && user != "" {
		if userState, err = s.readUserState(ctx, app, user); err != nil {
			return nil, nil, err
		}
	}
	return appState, userState, nil
}

func (s *SessionService) readState(ctx context.Context, ns store.Namespace, key string) (map[string]any, error) {
	it, err := s.st.Get(ctx, ns, key)
	if err != nil {
		return nil, fmt.Errorf("adk: read state: %w", err)
	}
	return stateOf(it), nil
}

// stateOf is the state an item holds (empty for none).
func stateOf(it *store.Item) map[string]any {
	var st map[string]any
	if it != nil {
		st, _ = it.Value["state"].(map[string]any)
	}
	if st == nil {
		st = map[string]any{}
	}
	return st
}

// readUserState reads user's state where it lives, or where it lived
// before (oldUserStatePlace) when it has not moved yet: both in one batch.
func (s *SessionService) readUserState(ctx context.Context, app, user string) (map[string]any, error) {
	it, err := relocate.Get(ctx, s.st, s.userStatePlace(app, user), s.oldUserStatePlace(app, user))
	if err != nil {
		return nil, fmt.Errorf("adk: read state: %w", err)
	}
	return stateOf(it), nil
}

// mergeShared merges deltas into the app's and the user's state, each a
// compare-and-set update retried until it lands (store.Update), so that
// concurrent sessions' keys all land, and returns both states.
func (s *SessionService) mergeShared(ctx context.Context, app, user string, appDelta, userDelta map[string]any) (map[string]any, map[string]any, error) {
	appState, err := s.mergeState(ctx, s.appStateNS(app), appStateKey, appDelta)
	if err != nil {
		return nil, nil, err
	}
	userState, err := s.mergeUserState(ctx, app, user, userDelta)
	if err != nil {
		return nil, nil, err
	}
	return appState, userState, nil
}

func (s *SessionService) mergeState(ctx context.Context, ns store.Namespace, key string, delta map[string]any) (map[string]any, error) {
	if len(delta) == 0 {
		cur, err := s.readState(ctx, ns, key)
		return cur, err
	}
	var merged map[string]any
	err := store.Update(ctx, s.st, ns, key, func(it *store.Item) (map[string]any, error) {
		merged = merge(it, delta)
		return map[string]any{"state": merged}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("adk: write state: %w", err)
	}
	return merged, nil
}

// mergeUserState is mergeState of user's state, which moves from where
// it lived before (oldUserStatePlace) if it has not yet.
func (s *SessionService) mergeUserState(ctx context.Context, app, user string, delta map[string]any) (map[string]any, error) {
	if len(delta) == 0 {
		return s.readUserState(ctx, app, user)
	}
	var merged map[string]any
	err := relocate.Update(ctx, s.st, s.userStatePlace(app, user), s.oldUserStatePlace(app, user), func(it *store.Item) (map[string]any, error) {
		merged = merge(it, delta)
		return map[string]any{"state": merged}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("adk: write state: %w", err)
	}
	return merged, nil
}

// merge returns the state of it (nil: none) with delta merged in.
func merge(it *store.Item, delta map[string]any) map[string]any {
	merged := maps.Clone(stateOf(it))
	maps.Copy(merged, delta)
	return merged
}

// MigrateUserState moves every user's "user:" state from where versions
// before per-user namespaces kept it (an item per user in one namespace
// per app, under no subject: sealed under the master key) to the user's
// own namespace, and returns how many items it moved. Until then such
// state is still read, and its next write moves it, but it is not the
// user's subject's: forgetting the user does not reach it. Run it once
// after upgrading every process (one not upgraded would write the old
// place again); running it again moves nothing.
func (s *SessionService) MigrateUserState(ctx context.Context) (int, error) {
	old := append(append(store.Namespace(nil), s.prefix...), "*", "user-state")
	n, err := relocate.Move(ctx, s.st, old, func(ns store.Namespace, user string) relocate.Place {
		return relocate.Place{Namespace: append(ns[:len(ns):len(ns)], labels.Escape(user)), Key: userStateKey}
	})
	if err != nil {
		return n, fmt.Errorf("adk: migrate user state: %w", err)
	}
	return n, nil
}

// Session is a session read from a SessionService: the handle AppendEvent
// needs. It is safe for concurrent use.
type Session struct {
	app, user, id string

	mu      sync.RWMutex
	rev     int64 // the stored revision this handle has seen
	updated time.Time
	state   map[string]any
	events  []*session.Event
}

var _ session.Session = (*Session)(nil)

// newSession makes the handle of a stored session, its state merged from
// the app's, the user's and its own.
func newSession(app, user, id string, r *record, appState, userState map[string]any, events []*session.Event) *Session {
	state := make(map[string]any, len(r.state)+len(appState)+len(userState))
	maps.Copy(state, r.state)
	for k, v := range appState {
		state[session.KeyPrefixApp+k] = v
	}
	for k, v := range userState {
		state[session.KeyPrefixUser+k] = v
	}
	if events == nil {
		events = r.events
	}
	return &Session{app: app, user: user, id: id, rev: r.rev, updated: r.updated, state: state, events: append([]*session.Event(nil), events...)}
}

// ID implements session.Session.
func (s *Session) ID() string { return s.id }

// AppName implements session.Session.
func (s *Session) AppName() string { return s.app }

// UserID implements session.Session.
func (s *Session) UserID() string { return s.user }

// LastUpdateTime implements session.Session: the time of the last stored
// event (of the creation, before any).
func (s *Session) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updated
}

// State implements session.Session. Set changes the handle only; state is
// stored through events' state deltas, as ADK does.
func (s *Session) State() session.State { return (*sessionState)(s) }

// Events implements session.Session.
func (s *Session) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return events(append([]*session.Event(nil), s.events...))
}

type sessionState Session

func (st *sessionState) Get(key string) (any, error) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	v, ok := st.state[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (st *sessionState) Set(key string, value any) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.state[key] = value
	return nil
}

func (st *sessionState) All() iter.Seq2[string, any] {
	st.mu.RLock()
	c := maps.Clone(st.state)
	st.mu.RUnlock()
	return maps.All(c)
}

type events []*session.Event

func (e events) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

func (e events) Len() int { return len(e) }

func (e events) At(i int) *session.Event {
	if i >= 0 && i < len(e) {
		return e[i]
	}
	return nil
}
