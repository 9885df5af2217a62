package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/platform"
	"google.golang.org/adk/session"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/adapters/shared/relocate"
	"github.com/memvault/memvault/checkpointer"
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
	// EventsExpire says the store expires items (a store TTL): a session
	// whose oldest events are gone then reads from the oldest event still
	// held. Without it (the default) a missing event is ErrSessionDamaged:
	// no append leaves a gap, so only someone with write access to the
	// store can have removed it, and the history must not shrink silently.
	EventsExpire bool
}

// ErrSessionDamaged is returned when a session's chain of events has a
// gap (an event item was removed from the store) and Options.EventsExpire
// is not set.
var ErrSessionDamaged = errors.New("adk: an event of the session is missing from the store")

// SessionService is an ADK session.Service on a memvault store. It is safe
// for concurrent use, also by several processes sharing the store.
type SessionService struct {
	st     store.Store
	cas    store.ConditionalPutter
	list   store.Lister
	del    store.PrefixDeleter
	prefix store.Namespace
	expire bool
}

var _ session.Service = (*SessionService)(nil)

// NewSessionService returns the session service of st, which must be a
// store.ConditionalPutter, a store.Lister and a store.PrefixDeleter (every
// memvault store is).
func NewSessionService(st store.Store, opts Options) (*SessionService, error) {
	cas, ok := st.(store.ConditionalPutter)
	if !ok {
		return nil, fmt.Errorf("%w: adk: store %T has no conditional put", store.ErrInvalidArgument, st)
	}
	list, ok := st.(store.Lister)
	if !ok {
		return nil, fmt.Errorf("%w: adk: store %T cannot list items", store.ErrInvalidArgument, st)
	}
	del, ok := st.(store.PrefixDeleter)
	if !ok {
		return nil, fmt.Errorf("%w: adk: store %T cannot delete a namespace", store.ErrInvalidArgument, st)
	}
	prefix := opts.Prefix
	if prefix == nil {
		prefix = store.Namespace{"adk"}
	}
	if err := prefix.Validate(); err != nil {
		return nil, fmt.Errorf("adk: prefix: %w", err)
	}
	return &SessionService{st: st, cas: cas, list: list, del: del, prefix: prefix, expire: opts.EventsExpire}, nil
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

// record is a session item as stored: the session's own state, a revision
// that every append moves forward (what the stale-handle check compares),
// the time of the last append, and where its events end: seq, the number
// of events, and last, the token of the last one (see eventKey). The events
// themselves are items of their own (see eventsNS), so an append writes
// the new event and this small item, whatever the session's length.
//
// Sessions written before that layout hold their events in the item
// ("events", ADK's JSON of all of them); legacy is then true and events
// holds them. They are read as they are, and the first append moves them
// to items of their own.
type record struct {
	rev     int64
	updated time.Time
	state   map[string]any
	seq     int64
	last    string

	legacy bool
	events []*session.Event
}

func (r *record) value() map[string]any {
	state := r.state
	if state == nil {
		state = map[string]any{}
	}
	return map[string]any{
		"rev":        r.rev,
		"updated_ns": r.updated.UnixNano(),
		"state":      state,
		"seq":        r.seq,
		"last":       r.last,
	}
}

// errMalformed reports a stored session or event this package cannot read.
var errMalformed = errors.New("adk: malformed session")

func decodeRecord(v map[string]any) (*record, error) {
	r := &record{}
	rev, ok1 := v["rev"].(int64)
	upd, ok2 := v["updated_ns"].(int64)
	state, ok3 := v["state"].(map[string]any)
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("%w record", errMalformed)
	}
	r.rev, r.updated, r.state = rev, time.Unix(0, upd), state
	if ev, ok := v["events"].([]byte); ok {
		r.legacy = true
		if err := json.Unmarshal(ev, &r.events); err != nil {
			return nil, fmt.Errorf("%w events: %w", errMalformed, err)
		}
		return r, nil
	}
	seq, ok1 := v["seq"].(int64)
	last, ok2 := v["last"].(string)
	if !ok1 || !ok2 || seq < 0 || (seq > 0) != (last != "") {
		return nil, fmt.Errorf("%w record", errMalformed)
	}
	r.seq, r.last = seq, last
	return r, nil
}

// eventsNS is the namespace of a session's events: under the user's
// sessions namespace, so the user's subject covers them.
func (s *SessionService) eventsNS(app, user, id string) store.Namespace {
	return append(s.sessionsNS(app, user), labels.Escape(id))
}

// eventKey is the key of the event at position seq (from 1) written with
// token: keys sort by position. The token, random per append attempt, keeps
// the event of an append that lost its race (or whose process died before
// its session item was written) apart from the one that won: each event
// names the token of the one before it, and the session item the token of
// the last, so readers follow that chain and never see the others.
func eventKey(seq int64, token string) string {
	return fmt.Sprintf("%020d.%s", seq, token)
}

// afterSeq is the ListItems cursor that starts at position seq+1: "~"
// sorts after the "." and the hex digits of every key at seq.
func afterSeq(seq int64) string {
	if seq <= 0 {
		return ""
	}
	return fmt.Sprintf("%020d~", seq)
}

func parseEventKey(key string) (int64, string, bool) {
	num, token, ok := strings.Cut(key, ".")
	if !ok || len(num) != 20 {
		return 0, "", false
	}
	seq, err := strconv.ParseInt(num, 10, 64)
	return seq, token, err == nil
}

func newToken() string { return fmt.Sprintf("%016x", rand.Uint64()) }

// eventItem is one event as stored: prev is the token of the event before
// it ("" for the first).
func eventItem(prev string, ev *session.Event) (map[string]any, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("adk: encode event: %w", err)
	}
	return map[string]any{"prev": prev, "event": b}, nil
}

// readEvents returns r's events, oldest first: the last num of them when
// num > 0, and of those the ones from the last before after on when after
// is not zero (events are in time order, as ADK appends them). It lists
// only the positions it needs, from the end: all of them for a full read,
// growing windows for an after that is not known to be in the last num.
func (s *SessionService) readEvents(ctx context.Context, app, user, id string, r *record, num int, after time.Time) ([]*session.Event, error) {
	if r.legacy {
		events := r.events
		if num > 0 {
			events = events[max(len(events)-num, 0):]
		}
		if !after.IsZero() {
			i := sort.Search(len(events), func(i int) bool { return !events[i].Timestamp.Before(after) })
			events = events[i:]
		}
		return slices.Clone(events), nil
	}
	floor := int64(0)
	if num > 0 {
		floor = max(r.seq-int64(num), 0)
	}
	window := r.seq - floor
	if !after.IsZero() {
		window = min(window, 16)
	}
	var back []*session.Event // newest first
	hi, token := r.seq, r.last
	for hi > floor && token != "" {
		lo := max(hi-window, floor)
		chain, err := s.listEvents(ctx, app, user, id, lo, hi)
		if err != nil {
			return nil, err
		}
		for ; hi > lo; hi-- {
			it, ok := chain[eventKey(hi, token)]
			if !ok {
				if !s.expire {
					return nil, fmt.Errorf("%w: event %d of session %q (set Options.EventsExpire if the store has a TTL)", ErrSessionDamaged, hi, id)
				}
				// The rest expired (a store TTL): the history starts
				// after the gap.
				token = ""
				break
			}
			ev, prev, err := decodeEvent(it)
			if err != nil {
				return nil, err
			}
			if !after.IsZero() && ev.Timestamp.Before(after) {
				token = ""
				break
			}
			back = append(back, ev)
			token = prev
		}
		window *= 4
	}
	slices.Reverse(back)
	return back, nil
}

// listEvents lists the stored event items at positions lo+1 to hi, by key.
func (s *SessionService) listEvents(ctx context.Context, app, user, id string, lo, hi int64) (map[string]map[string]any, error) {
	ns := s.eventsNS(app, user, id)
	out := make(map[string]map[string]any, hi-lo)
	cursor := afterSeq(lo)
	for {
		page, err := s.list.ListItems(ctx, ns, store.ListItemsOptions{After: cursor, Limit: int(min(hi-lo+8, 1000))})
		if err != nil {
			return nil, fmt.Errorf("adk: list events: %w", err)
		}
		for _, it := range page {
			seq, _, ok := parseEventKey(it.Key)
			if !ok {
				continue
			}
			if seq > hi {
				return out, nil
			}
			out[it.Key] = it.Value
		}
		if len(page) == 0 {
			return out, nil
		}
		cursor = page[len(page)-1].Key
	}
}

func decodeEvent(v map[string]any) (*session.Event, string, error) {
	prev, ok1 := v["prev"].(string)
	b, ok2 := v["event"].([]byte)
	if !ok1 || !ok2 {
		return nil, "", fmt.Errorf("%w event", errMalformed)
	}
	ev := &session.Event{}
	if err := json.Unmarshal(b, ev); err != nil {
		return nil, "", fmt.Errorf("%w event: %w", errMalformed, err)
	}
	return ev, prev, nil
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
		return nil, fmt.Errorf("adk: app_name and user_id are required, got %s, %s", checkpointer.NameID("app_name", req.AppName), checkpointer.NameID("user_id", req.UserID))
	}
	id := req.SessionID
	if id == "" {
		id = platform.NewUUID(ctx)
	}
	// The session's events live in a namespace of its own, which must fit
	// the store's limit (store.MaxIDBytes) once the id is escaped: refused
	// here rather than at its first append.
	if err := s.eventsNS(req.AppName, req.UserID, id).ValidateStored(); err != nil {
		return nil, fmt.Errorf("adk: session id of %d bytes: %w", len(id), err)
	}
	app, user, own := splitState(req.State)
	r := &record{rev: 1, updated: platform.Now(ctx), state: own}
	err := s.cas.PutIf(ctx, s.sessionsNS(req.AppName, req.UserID), id, r.value(), store.PutCondition{}, store.WithoutIndex())
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
		return nil, fmt.Errorf("adk: app_name, user_id, session_id are required, got %s, %s, %s", checkpointer.NameID("app_name", req.AppName), checkpointer.NameID("user_id", req.UserID), checkpointer.NameID("session_id", req.SessionID))
	}
	r, _, err := s.load(ctx, req.AppName, req.UserID, req.SessionID)
	if err != nil {
		return nil, err
	}
	events, err := s.readEvents(ctx, req.AppName, req.UserID, req.SessionID, r, req.NumRecentEvents, req.After)
	if err != nil {
		return nil, err
	}
	appState, userState, err := s.shared(ctx, req.AppName, req.UserID)
	if err != nil {
		return nil, err
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
		// A lookup takes an id of any length (only writes are bounded), so
		// a long one is named by its length, not quoted into logs.
		return nil, time.Time{}, fmt.Errorf("%w: %s", ErrSessionNotFound, checkpointer.NameID("session", id))
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
	for _, user := range users {
		userState, err := s.readUserState(ctx, req.AppName, user)
		if err != nil {
			return nil, err
		}
		after := ""
		for {
			page, err := s.list.ListItems(ctx, s.sessionsNS(req.AppName, user), store.ListItemsOptions{After: after, Limit: 500})
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

// Delete implements session.Service: the session item goes first, so that
// a Delete cut short leaves no session whose events are missing (events
// left behind belong to no session's chain), then its events. Deleting a
// missing session is not an error.
func (s *SessionService) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return fmt.Errorf("adk: app_name, user_id, session_id are required, got %s, %s, %s", checkpointer.NameID("app_name", req.AppName), checkpointer.NameID("user_id", req.UserID), checkpointer.NameID("session_id", req.SessionID))
	}
	if err := s.st.Delete(ctx, s.sessionsNS(req.AppName, req.UserID), req.SessionID); err != nil {
		return fmt.Errorf("adk: delete session: %w", err)
	}
	if _, err := s.del.DeletePrefix(ctx, s.eventsNS(req.AppName, req.UserID, req.SessionID)); err != nil {
		return fmt.Errorf("adk: delete session events: %w", err)
	}
	return nil
}

// AppendEvent implements session.Service. The event (without "temp:"
// state) is written as an item of its own, then the session item — its
// state with the event's delta, its revision, where its events end — with
// a compare-and-set on the version read. When the handle is not current,
// or another append won the race in between, that fails with
// ErrStaleSession: the event's item is removed again, and the session is
// as it was (an item left behind by a process that died in between belongs
// to no session's chain: readers never see it). An append thus writes the
// new event and the small session item, however long the session. The
// handle is then brought up to date. Partial events are not stored.
//
// A session stored before events had items of their own has them moved
// there by its first append, in the same write as the new event.
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
	ns := s.eventsNS(h.app, h.user, h.id)
	var puts []store.Op
	seq, prev := r.seq, r.last
	add := func(ev *session.Event) error {
		v, err := eventItem(prev, ev)
		if err != nil {
			return err
		}
		token := newToken()
		seq++
		puts = append(puts, store.PutOp{Namespace: ns, Key: eventKey(seq, token), Value: v, Options: store.PutOptions{Index: []string{}}})
		prev = token
		return nil
	}
	if r.legacy {
		for _, ev := range r.events {
			if err := add(ev); err != nil {
				return err
			}
		}
	}
	if err := add(stored); err != nil {
		return err
	}
	if _, err := s.st.Batch(ctx, puts); err != nil {
		return fmt.Errorf("adk: append event: %w", err)
	}
	maps.Copy(r.state, own)
	next := &record{rev: r.rev + 1, updated: event.Timestamp, state: r.state, seq: seq, last: prev}
	err = s.cas.PutIf(ctx, s.sessionsNS(h.app, h.user), h.id, next.value(), store.PutCondition{UpdatedAt: version}, store.WithoutIndex())
	if errors.Is(err, store.ErrConflict) {
		s.discard(ctx, puts)
		return fmt.Errorf("%w: session %q", ErrStaleSession, h.id)
	}
	if err != nil {
		return fmt.Errorf("adk: append event: %w", err)
	}
	// The handle follows what was stored; its state also takes the event's
	// "temp:" keys, which live as long as the handle (ADK's rule).
	h.rev, h.updated = next.rev, next.updated
	h.events = append(h.events, stored)
	maps.Copy(h.state, event.Actions.StateDelta)
	if len(app) > 0 || len(user) > 0 {
		if _, _, err := s.mergeShared(ctx, h.app, h.user, app, user); err != nil {
			return fmt.Errorf("adk: the event is stored, its app/user state is not: %w", err)
		}
	}
	return nil
}

// discard deletes the event items of an append that lost its race. It is
// tidying only: no session's chain names them, so if it fails (or the
// caller's context has ended) they stay unseen until the session is
// deleted.
func (s *SessionService) discard(ctx context.Context, puts []store.Op) {
	dels := make([]store.Op, len(puts))
	for i, op := range puts {
		p := op.(store.PutOp)
		dels[i] = store.PutOp{Namespace: p.Namespace, Key: p.Key}
	}
	_, _ = s.st.Batch(context.WithoutCancel(ctx), dels)
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
	}, store.WithoutIndex()) // state is looked up by key, never searched
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
	}, store.WithoutIndex()) // state is looked up by key, never searched
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
