package trpcagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"trpc.group/trpc-go/trpc-agent-go/event"
	"trpc.group/trpc-go/trpc-agent-go/session"
	"trpc.group/trpc-go/trpc-agent-go/session/summary"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/adapters/shared/relocate"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/store"
)

// ErrSessionNotFound reports an UpdateSessionState, AppendEvent or
// AppendTrackEvent on a session that does not exist (or has expired).
// GetSession reports a missing session as (nil, nil), as tRPC's services do.
var ErrSessionNotFound = errors.New("trpcagent: session not found")

// SessionOptions configures a SessionService. The zero value is usable.
type SessionOptions struct {
	// Prefix is the namespace under which sessions and shared state live;
	// nil means {"trpc"}.
	Prefix store.Namespace
	// SessionTTL, when positive, expires a session that long after its
	// last write (the store's TTL: its sweeper deletes it); 0 keeps
	// sessions until deleted.
	SessionTTL time.Duration
	// EventLimit, when positive, keeps only a session's newest EventLimit
	// events (starting at a user message, as tRPC trims); 0 keeps all.
	EventLimit int
	// Summarizer makes CreateSessionSummary and EnqueueSummaryJob produce
	// summaries; nil turns summaries off, as in tRPC's services.
	Summarizer summary.SessionSummarizer
}

// SessionService is a tRPC-Agent-Go session.Service (and TrackService) on a
// memvault store: each session is one item holding tRPC's JSON of the
// session (state, events, tracks, summaries), sealed and bound to its app,
// user and id when the store encrypts. App and user state are items of
// their own. Every change to a session is a compare-and-set
// read-modify-write (store.Update), so processes sharing the store never
// lose each other's events.
type SessionService struct {
	st     store.Store
	prefix store.Namespace
	opts   SessionOptions
}

var (
	_ session.Service      = (*SessionService)(nil)
	_ session.TrackService = (*SessionService)(nil)
)

// NewSessionService returns the session service of st, which must be a
// store.ConditionalPutter and a store.Lister (every memvault store is).
func NewSessionService(st store.Store, opts SessionOptions) (*SessionService, error) {
	if _, ok := st.(store.ConditionalPutter); !ok {
		return nil, fmt.Errorf("trpcagent: store %T has no conditional put", st)
	}
	if _, ok := st.(store.Lister); !ok {
		return nil, fmt.Errorf("trpcagent: store %T cannot list items", st)
	}
	if opts.SessionTTL < 0 || opts.EventLimit < 0 {
		return nil, fmt.Errorf("trpcagent: negative SessionTTL %v or EventLimit %d", opts.SessionTTL, opts.EventLimit)
	}
	prefix := opts.Prefix
	if prefix == nil {
		prefix = store.Namespace{"trpc"}
	}
	if err := prefix.Validate(); err != nil {
		return nil, fmt.Errorf("trpcagent: prefix: %w", err)
	}
	return &SessionService{st: st, prefix: prefix, opts: opts}, nil
}

func (s *SessionService) appNS(app string, labelsAfter ...string) store.Namespace {
	ns := append(append(store.Namespace(nil), s.prefix...), labels.Escape(app))
	return append(ns, labelsAfter...)
}

func (s *SessionService) sessionsNS(app, user string) store.Namespace {
	return s.appNS(app, "sessions", labels.Escape(user))
}

// appStateKey and userStateKey are the keys of the shared state items.
const (
	appStateKey  = "state"
	userStateKey = "state"
)

// storedSession is a session as stored: tRPC's JSON of its fields.
type storedSession struct {
	State     session.StateMap                       `json:"state"`
	Events    []event.Event                          `json:"events"`
	Tracks    map[session.Track]*session.TrackEvents `json:"tracks,omitempty"`
	Summaries map[string]*session.Summary            `json:"summaries,omitempty"`
	CreatedAt time.Time                              `json:"createdAt"`
	UpdatedAt time.Time                              `json:"updatedAt"`
}

// encode returns the item value of sess, which the caller owns.
func encode(sess *session.Session) (map[string]any, error) {
	b, err := json.Marshal(storedSession{
		State: sess.State, Events: sess.Events, Tracks: sess.Tracks, Summaries: sess.Summaries,
		CreatedAt: sess.CreatedAt, UpdatedAt: sess.UpdatedAt,
	})
	if err != nil {
		return nil, fmt.Errorf("trpcagent: encode session: %w", err)
	}
	return map[string]any{"session": b}, nil
}

// decode rebuilds the session of a stored item.
func decode(key session.Key, it *store.Item) (*session.Session, error) {
	b, ok := it.Value["session"].([]byte)
	var st storedSession
	if !ok || json.Unmarshal(b, &st) != nil {
		return nil, fmt.Errorf("trpcagent: malformed session %q", key.SessionID)
	}
	if st.State == nil {
		st.State = session.StateMap{}
	}
	if st.Events == nil {
		st.Events = []event.Event{}
	}
	if st.Summaries == nil {
		st.Summaries = map[string]*session.Summary{}
	}
	sess := session.NewSession(key.AppName, key.UserID, key.SessionID,
		session.WithSessionState(st.State), session.WithSessionEvents(st.Events), session.WithSessionSummaries(st.Summaries),
		session.WithSessionCreatedAt(st.CreatedAt), session.WithSessionUpdatedAt(st.UpdatedAt))
	sess.Tracks = st.Tracks
	return sess, nil
}

func (s *SessionService) putOptions() []store.PutOption {
	if s.opts.SessionTTL > 0 {
		return []store.PutOption{store.WithTTL(s.opts.SessionTTL), store.WithoutIndex()}
	}
	return []store.PutOption{store.WithoutIndex()}
}

// CreateSession implements session.Service. A session id of the app and
// user that exists is replaced by the new, empty session, as in tRPC's
// in-memory service; an empty id gets a random UUID.
func (s *SessionService) CreateSession(ctx context.Context, key session.Key, state session.StateMap, _ ...session.Option) (*session.Session, error) {
	if err := key.CheckUserKey(); err != nil {
		return nil, err
	}
	if key.SessionID == "" {
		key.SessionID = uuid.NewString()
	}
	sess := session.NewSession(key.AppName, key.UserID, key.SessionID)
	for k, v := range state {
		sess.SetState(k, v)
	}
	v, err := encode(sess)
	if err != nil {
		return nil, err
	}
	if err := s.st.Put(ctx, s.sessionsNS(key.AppName, key.UserID), key.SessionID, v, s.putOptions()...); err != nil {
		return nil, fmt.Errorf("trpcagent: create session: %w", err)
	}
	return s.withShared(ctx, sess)
}

// GetSession implements session.Service: the session (nil when missing)
// with its events filtered by WithEventNum and WithEventTime, and the app's
// and user's state merged in as "app:" and "user:" keys. Event pages
// (WithGetSessionEventPage) are not supported: the session is one item.
func (s *SessionService) GetSession(ctx context.Context, key session.Key, opts ...session.Option) (*session.Session, error) {
	if err := key.CheckSessionKey(); err != nil {
		return nil, err
	}
	o := &session.Options{}
	for _, f := range opts {
		f(o)
	}
	if err := session.ValidateGetSessionOptions(o, false); err != nil {
		return nil, err
	}
	sess, err := s.load(ctx, key)
	if err != nil || sess == nil {
		return nil, err
	}
	sess.ApplyEventFiltering(session.WithEventNum(o.EventNum), session.WithEventTime(o.EventTime))
	return s.withShared(ctx, sess)
}

func (s *SessionService) load(ctx context.Context, key session.Key) (*session.Session, error) {
	it, err := s.st.Get(ctx, s.sessionsNS(key.AppName, key.UserID), key.SessionID)
	if err != nil {
		return nil, fmt.Errorf("trpcagent: get session: %w", err)
	}
	if it == nil {
		return nil, nil
	}
	return decode(key, it)
}

// withShared merges the app's and the user's state into sess.
func (s *SessionService) withShared(ctx context.Context, sess *session.Session) (*session.Session, error) {
	appState, err := s.readState(ctx, s.appNS(sess.AppName, "app-state"), appStateKey)
	if err != nil {
		return nil, err
	}
	userState, err := s.readUserState(ctx, sess.AppName, sess.UserID)
	if err != nil {
		return nil, err
	}
	mergeShared(sess, appState, userState)
	return sess, nil
}

func mergeShared(sess *session.Session, appState, userState session.StateMap) {
	for k, v := range appState {
		sess.SetState(session.StateAppPrefix+k, v)
	}
	for k, v := range userState {
		sess.SetState(session.StateUserPrefix+k, v)
	}
}

// ListSessions implements session.Service: the user's sessions, most
// recently updated first, paged by WithListSessionPage, without events and
// tracks under WithListSessionOnlyMeta.
func (s *SessionService) ListSessions(ctx context.Context, userKey session.UserKey, opts ...session.Option) ([]*session.Session, error) {
	if err := userKey.CheckUserKey(); err != nil {
		return nil, err
	}
	o := &session.Options{}
	for _, f := range opts {
		f(o)
	}
	if err := session.ValidateListSessionsOptions(o); err != nil {
		return nil, err
	}
	appState, err := s.readState(ctx, s.appNS(userKey.AppName, "app-state"), appStateKey)
	if err != nil {
		return nil, err
	}
	userState, err := s.readUserState(ctx, userKey.AppName, userKey.UserID)
	if err != nil {
		return nil, err
	}
	lister := s.st.(store.Lister)
	out := []*session.Session{}
	const page = 500
	for after := ""; ; {
		items, err := lister.ListItems(ctx, s.sessionsNS(userKey.AppName, userKey.UserID), store.ListItemsOptions{After: after, Limit: page})
		if err != nil {
			return nil, fmt.Errorf("trpcagent: list sessions: %w", err)
		}
		for i := range items {
			sess, err := decode(session.Key{AppName: userKey.AppName, UserID: userKey.UserID, SessionID: items[i].Key}, &items[i])
			if err != nil {
				return nil, err
			}
			if o.ListSessionOnlyMeta {
				sess.Events, sess.Tracks = []event.Event{}, nil
			} else {
				sess.ApplyEventFiltering(opts...)
			}
			mergeShared(sess, appState, userState)
			out = append(out, sess)
		}
		if len(items) < page {
			break
		}
		after = items[len(items)-1].Key
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	if p := o.ListSessionPage; p != nil {
		start := min(p.Offset, len(out))
		end := len(out)
		if p.Limit > 0 {
			end = min(start+p.Limit, len(out))
		}
		out = out[start:end]
	}
	return out, nil
}

// DeleteSession implements session.Service; deleting a missing session is
// not an error.
func (s *SessionService) DeleteSession(ctx context.Context, key session.Key, _ ...session.Option) error {
	if err := key.CheckSessionKey(); err != nil {
		return err
	}
	if err := s.st.Delete(ctx, s.sessionsNS(key.AppName, key.UserID), key.SessionID); err != nil {
		return fmt.Errorf("trpcagent: delete session: %w", err)
	}
	return nil
}

// UpdateAppState implements session.Service ("app:" prefixes are removed).
func (s *SessionService) UpdateAppState(ctx context.Context, appName string, state session.StateMap) error {
	if appName == "" {
		return session.ErrAppNameRequired
	}
	return s.updateState(ctx, s.appNS(appName, "app-state"), appStateKey, func(cur session.StateMap) {
		for k, v := range state {
			cur[strings.TrimPrefix(k, session.StateAppPrefix)] = v
		}
	})
}

// DeleteAppState implements session.Service.
func (s *SessionService) DeleteAppState(ctx context.Context, appName string, key string) error {
	if appName == "" {
		return session.ErrAppNameRequired
	}
	return s.updateState(ctx, s.appNS(appName, "app-state"), appStateKey, func(cur session.StateMap) {
		delete(cur, strings.TrimPrefix(key, session.StateAppPrefix))
	})
}

// ListAppStates implements session.Service.
func (s *SessionService) ListAppStates(ctx context.Context, appName string) (session.StateMap, error) {
	if appName == "" {
		return nil, session.ErrAppNameRequired
	}
	return s.readState(ctx, s.appNS(appName, "app-state"), appStateKey)
}

// UpdateUserState implements session.Service ("user:" prefixes are
// removed; "app:" and "temp:" keys are refused).
func (s *SessionService) UpdateUserState(ctx context.Context, userKey session.UserKey, state session.StateMap) error {
	if err := userKey.CheckUserKey(); err != nil {
		return err
	}
	for k := range state {
		if strings.HasPrefix(k, session.StateAppPrefix) || strings.HasPrefix(k, session.StateTempPrefix) {
			return fmt.Errorf("trpcagent: update user state: key %q is not allowed", k)
		}
	}
	return s.updateUserState(ctx, userKey.AppName, userKey.UserID, func(cur session.StateMap) {
		for k, v := range state {
			cur[strings.TrimPrefix(k, session.StateUserPrefix)] = v
		}
	})
}

// ListUserStates implements session.Service.
func (s *SessionService) ListUserStates(ctx context.Context, userKey session.UserKey) (session.StateMap, error) {
	if err := userKey.CheckUserKey(); err != nil {
		return nil, err
	}
	return s.readUserState(ctx, userKey.AppName, userKey.UserID)
}

// DeleteUserState implements session.Service.
func (s *SessionService) DeleteUserState(ctx context.Context, userKey session.UserKey, key string) error {
	if err := userKey.CheckUserKey(); err != nil {
		return err
	}
	return s.updateUserState(ctx, userKey.AppName, userKey.UserID, func(cur session.StateMap) {
		delete(cur, strings.TrimPrefix(key, session.StateUserPrefix))
	})
}

// userStatePlace is where a user's state lives: in a namespace of the
// user's, like her sessions and memories, so that the subject prefixes
// of SubjectNamespaces cover it.
func (s *SessionService) userStatePlace(app, user string) relocate.Place {
	return relocate.Place{Namespace: s.appNS(app, "user-state", labels.Escape(user)), Key: userStateKey}
}

// oldUserStatePlace is where a user's state lived before it had a
// namespace of the user's: an item keyed by the user's label in one
// namespace per app (under no subject, so sealed under the master key).
// It is read while the user has no state where it lives now, and moved
// from there by the next write or by MigrateUserState.
func (s *SessionService) oldUserStatePlace(app, user string) relocate.Place {
	return relocate.Place{Namespace: s.appNS(app, "user-state"), Key: labels.Escape(user)}
}

// readUserState reads user's state where it lives, or where it lived
// before when it has not moved yet: both in one batch.
func (s *SessionService) readUserState(ctx context.Context, app, user string) (session.StateMap, error) {
	it, err := relocate.Get(ctx, s.st, s.userStatePlace(app, user), s.oldUserStatePlace(app, user))
	if err != nil {
		return nil, fmt.Errorf("trpcagent: read state: %w", err)
	}
	return stateOf(it)
}

// updateUserState is updateState of user's state, which moves from where
// it lived before if it has not yet.
func (s *SessionService) updateUserState(ctx context.Context, app, user string, change func(session.StateMap)) error {
	err := relocate.Update(ctx, s.st, s.userStatePlace(app, user), s.oldUserStatePlace(app, user), func(it *store.Item) (map[string]any, error) {
		return changedState(it, change), nil
	}, store.WithoutIndex())
	if err != nil {
		return fmt.Errorf("trpcagent: write state: %w", err)
	}
	return nil
}

// MigrateUserState moves every user's state from where versions before
// per-user namespaces kept it (an item per user in one namespace per app,
// under no subject: sealed under the master key) to the user's own
// namespace, and returns how many items it moved. Until then such state
// is still read, and its next write moves it, but it is not the user's
// subject's: forgetting the user does not reach it. Run it once after
// upgrading every process (one not upgraded would write the old place
// again); running it again moves nothing.
func (s *SessionService) MigrateUserState(ctx context.Context) (int, error) {
	old := append(append(store.Namespace(nil), s.prefix...), "*", "user-state")
	n, err := relocate.Move(ctx, s.st, old, func(ns store.Namespace, userLabel string) relocate.Place {
		return relocate.Place{Namespace: append(ns[:len(ns):len(ns)], userLabel), Key: userStateKey}
	}, store.WithoutIndex())
	if err != nil {
		return n, fmt.Errorf("trpcagent: migrate user state: %w", err)
	}
	return n, nil
}

// readState reads a shared state item (empty when there is none).
func (s *SessionService) readState(ctx context.Context, ns store.Namespace, key string) (session.StateMap, error) {
	it, err := s.st.Get(ctx, ns, key)
	if err != nil {
		return nil, fmt.Errorf("trpcagent: read state: %w", err)
	}
	return stateOf(it)
}

// stateOf is the state a shared state item holds (empty for none).
func stateOf(it *store.Item) (session.StateMap, error) {
	out := session.StateMap{}
	if it == nil {
		return out, nil
	}
	for k, v := range it.Value {
		switch b := v.(type) {
		case []byte:
			out[k] = b
		case nil:
			out[k] = nil
		default:
			return nil, fmt.Errorf("trpcagent: malformed state %q", k)
		}
	}
	return out, nil
}

// updateState changes a shared state item with compare-and-set retries, so
// that concurrent writers' keys all land.
func (s *SessionService) updateState(ctx context.Context, ns store.Namespace, key string, change func(session.StateMap)) error {
	err := store.Update(ctx, s.st, ns, key, func(it *store.Item) (map[string]any, error) {
		return changedState(it, change), nil
	}, store.WithoutIndex())
	if err != nil {
		return fmt.Errorf("trpcagent: write state: %w", err)
	}
	return nil
}

// changedState is the value of a state item (nil: none) after change.
func changedState(it *store.Item, change func(session.StateMap)) map[string]any {
	cur := session.StateMap{}
	if it != nil {
		for k, v := range it.Value {
			b, _ := v.([]byte)
			cur[k] = b
		}
	}
	change(cur)
	v := make(map[string]any, len(cur))
	for k, b := range cur {
		if b == nil {
			v[k] = nil
		} else {
			v[k] = b
		}
	}
	return v
}

// updateSession applies change to the stored session with compare-and-set
// retries; a missing session is ErrSessionNotFound.
func (s *SessionService) updateSession(ctx context.Context, key session.Key, change func(*session.Session) error) error {
	return store.Update(ctx, s.st, s.sessionsNS(key.AppName, key.UserID), key.SessionID, func(it *store.Item) (map[string]any, error) {
		if it == nil {
			return nil, fmt.Errorf("%w: %s", ErrSessionNotFound, checkpointer.NameID("id", key.SessionID))
		}
		sess, err := decode(key, it)
		if err != nil {
			return nil, err
		}
		if err := change(sess); err != nil {
			return nil, err
		}
		return encode(sess)
	}, s.putOptions()...)
}

// UpdateSessionState implements session.Service: the session's own state
// changes without an event; "app:" and "user:" keys are refused.
func (s *SessionService) UpdateSessionState(ctx context.Context, key session.Key, state session.StateMap) error {
	if err := key.CheckSessionKey(); err != nil {
		return err
	}
	for k := range state {
		if strings.HasPrefix(k, session.StateAppPrefix) || strings.HasPrefix(k, session.StateUserPrefix) {
			return fmt.Errorf("trpcagent: update session state: key %q is not allowed, use UpdateAppState or UpdateUserState", k)
		}
	}
	return s.updateSession(ctx, key, func(sess *session.Session) error {
		for k, v := range state {
			sess.SetState(k, v)
		}
		sess.UpdatedAt = time.Now()
		return nil
	})
}

// AppendEvent implements session.Service: sess (the caller's handle) takes
// the event as tRPC applies it, and the stored session takes it in one
// compare-and-set: complete, valid responses join the events (trimmed to
// EventLimit), every event's state delta joins the state.
func (s *SessionService) AppendEvent(ctx context.Context, sess *session.Session, evt *event.Event, opts ...session.Option) error {
	if sess == nil {
		return session.ErrNilSession
	}
	if evt == nil {
		return errors.New("trpcagent: event is nil")
	}
	key := session.Key{AppName: sess.AppName, UserID: sess.UserID, SessionID: sess.ID}
	if err := key.CheckSessionKey(); err != nil {
		return err
	}
	sess.UpdateUserSession(evt, opts...)
	return s.updateSession(ctx, key, func(stored *session.Session) error {
		if evt.Response != nil && !evt.IsPartial && evt.IsValidContent() {
			kept := *evt
			kept.ExecutionTrace = nil // not persisted by tRPC either
			stored.Events = append(stored.Events, kept)
			if s.opts.EventLimit > 0 && len(stored.Events) > s.opts.EventLimit {
				stored.ApplyEventFiltering(session.WithEventNum(s.opts.EventLimit))
			}
		}
		stored.UpdatedAt = time.Now()
		stored.ApplyEventStateDelta(evt)
		return nil
	})
}

// AppendTrackEvent implements session.TrackService: the handle and the
// stored session take the track event.
func (s *SessionService) AppendTrackEvent(ctx context.Context, sess *session.Session, ev *session.TrackEvent, opts ...session.Option) error {
	if sess == nil {
		return session.ErrNilSession
	}
	key := session.Key{AppName: sess.AppName, UserID: sess.UserID, SessionID: sess.ID}
	if err := key.CheckSessionKey(); err != nil {
		return err
	}
	if err := sess.AppendTrackEvent(ev, opts...); err != nil {
		return fmt.Errorf("trpcagent: append track event: %w", err)
	}
	return s.updateSession(ctx, key, func(stored *session.Session) error {
		return stored.AppendTrackEvent(ev, opts...)
	})
}

// CreateSessionSummary implements session.Service with
// SessionOptions.Summarizer (without one it does nothing). Unless force is
// set, the summarizer's ShouldSummarize decides; the summary covers the
// session's events of filterKey (all of them for "") and is stored on the
// session and set on sess. tRPC's own services also feed the previous
// summary and only the events after it to the model; this one summarizes
// what the session holds each time.
func (s *SessionService) CreateSessionSummary(ctx context.Context, sess *session.Session, filterKey string, force bool) error {
	if s.opts.Summarizer == nil {
		return nil
	}
	if sess == nil {
		return session.ErrNilSession
	}
	key := session.Key{AppName: sess.AppName, UserID: sess.UserID, SessionID: sess.ID}
	if err := key.CheckSessionKey(); err != nil {
		return err
	}
	input := sess.Clone()
	if filterKey != session.SummaryFilterKeyAllContents {
		var kept []event.Event
		for i := range input.Events {
			if input.Events[i].Filter(filterKey) {
				kept = append(kept, input.Events[i])
			}
		}
		input.Events = kept
	}
	if len(input.Events) == 0 || (!force && !s.opts.Summarizer.ShouldSummarize(input)) {
		return nil
	}
	text, err := s.opts.Summarizer.Summarize(ctx, input)
	if err != nil {
		return fmt.Errorf("trpcagent: summarize session %q: %w", sess.ID, err)
	}
	if text == "" {
		return nil
	}
	last := input.Events[len(input.Events)-1]
	sum := &session.Summary{
		Summary:   text,
		UpdatedAt: last.Timestamp.UTC(),
		Boundary:  session.NewSummaryBoundaryWithEventID(filterKey, last.Timestamp, last.ID),
	}
	if err := s.updateSession(ctx, key, func(stored *session.Session) error {
		if stored.Summaries == nil {
			stored.Summaries = map[string]*session.Summary{}
		}
		stored.Summaries[filterKey] = sum.Clone()
		return nil
	}); err != nil {
		return err
	}
	sess.SummariesMu.Lock()
	if sess.Summaries == nil {
		sess.Summaries = map[string]*session.Summary{}
	}
	sess.Summaries[filterKey] = sum
	sess.SummariesMu.Unlock()
	return nil
}

// EnqueueSummaryJob implements session.Service: the summary is made at
// once (there is no background worker), on a context that the caller's
// cancellation does not stop, as tRPC's synchronous fallback does.
func (s *SessionService) EnqueueSummaryJob(ctx context.Context, sess *session.Session, filterKey string, force bool) error {
	return s.CreateSessionSummary(context.WithoutCancel(ctx), sess, filterKey, force)
}

// GetSessionSummaryText implements session.Service: the summary of the
// filter key (session.WithSummaryFilterKey; the full session's by default)
// that sess holds.
func (s *SessionService) GetSessionSummaryText(_ context.Context, sess *session.Session, opts ...session.SummaryOption) (string, bool) {
	if sess == nil {
		return "", false
	}
	o := &session.SummaryOptions{FilterKey: session.SummaryFilterKeyAllContents}
	for _, f := range opts {
		f(o)
	}
	sess.SummariesMu.RLock()
	defer sess.SummariesMu.RUnlock()
	sum := sess.Summaries[o.FilterKey]
	if sum == nil || strings.TrimSpace(sum.Summary) == "" {
		return "", false
	}
	return sum.Summary, true
}

// Close implements session.Service; the store stays open (its owner closes
// it).
func (s *SessionService) Close() error { return nil }
