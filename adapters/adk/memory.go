package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"google.golang.org/adk/memory"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/adapters/shared/recall"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/store"
)

// DefaultMinScore is MemoryService's relevance threshold for a neural
// embedder (an OpenAI-compatible model): the cosine similarity
// (memvault's default distance) a memory's text must reach to be
// returned. The default follows the store's embedder: see
// MemoryOptions.MinScore.
const DefaultMinScore = recall.NeuralMinScore

// MemoryOptions configures a MemoryService. The zero value is usable.
type MemoryOptions struct {
	// Prefix is the namespace under which memories live; nil means {"adk"}
	// (they are kept apart from sessions by the label after the app).
	Prefix store.Namespace
	// MinScore is the score a memory must reach to be returned by
	// SearchMemory (higher is closer, see store.SearchItem.Score). ADK
	// expects an empty result when nothing matches, and semantic search
	// always ranks something first: the threshold is what says "nothing
	// matches". 0 means the default for the store's embedder
	// (store.EmbedderNamer): 0.10 for memvault's offline hashing embedder,
	// which scores a memory sharing one word with a short query from 0.12
	// (a long memory) to 0.30; DefaultMinScore (0.25) for an
	// OpenAI-compatible model; for another embedder no threshold — the
	// best Limit memories are returned, ranked.
	MinScore float64
	// Limit caps the memories SearchMemory returns; 0 means 10, as ADK's
	// in-memory service.
	Limit int
}

// MemoryService is an ADK memory.Service on a memvault store with a
// semantic index (store.IndexConfig): AddSessionToMemory stores the text of
// each event of a session, SearchMemory finds them by meaning through the
// store's embedder, within one app and user. With an encrypting store the
// memories are sealed like every store value; their vectors follow the
// store's embedder settings (keyed or sealed when encryption is on).
type MemoryService struct {
	st       store.Store
	del      store.PrefixDeleter
	prefix   store.Namespace
	minScore float64
	limit    int
}

var _ memory.Service = (*MemoryService)(nil)

// NewMemoryService returns the memory service of st, which must be a
// store.PrefixDeleter (every memvault store is) configured with an index.
func NewMemoryService(st store.Store, opts MemoryOptions) (*MemoryService, error) {
	del, ok := st.(store.PrefixDeleter)
	if !ok {
		return nil, fmt.Errorf("adk: store %T cannot delete by prefix", st)
	}
	prefix := opts.Prefix
	if prefix == nil {
		prefix = store.Namespace{"adk"}
	}
	if err := prefix.Validate(); err != nil {
		return nil, fmt.Errorf("adk: prefix: %w", err)
	}
	m := &MemoryService{st: st, del: del, prefix: prefix, minScore: opts.MinScore, limit: opts.Limit}
	if m.minScore == 0 {
		m.minScore = math.Inf(-1) // an embedder not known: rank
		if s, ok := recall.MinScore(st); ok {
			m.minScore = s
		}
	}
	if m.limit <= 0 {
		m.limit = 10
	}
	return m, nil
}

func (m *MemoryService) userNS(app, user string) store.Namespace {
	ns := append(store.Namespace(nil), m.prefix...)
	return append(ns, labels.Escape(app), "memory", labels.Escape(user))
}

// AddSessionToMemory implements memory.Service: the session's memories are
// replaced by the text of its events (events without text are skipped),
// one item per event, its text embedded.
func (m *MemoryService) AddSessionToMemory(ctx context.Context, s session.Session) error {
	if s == nil {
		return errors.New("adk: session is nil")
	}
	ns := append(m.userNS(s.AppName(), s.UserID()), labels.Escape(s.ID()))
	var ops []store.Op
	for ev := range s.Events().All() {
		text := eventText(ev)
		if text == "" || ev.ID == "" {
			continue
		}
		content, err := json.Marshal(ev.Content)
		if err != nil {
			return fmt.Errorf("adk: encode memory: %w", err)
		}
		v := map[string]any{
			"text":         text,
			"author":       ev.Author,
			"timestamp_ns": ev.Timestamp.UnixNano(),
			"content":      content,
		}
		if len(ev.CustomMetadata) > 0 {
			v["custom"] = ev.CustomMetadata
		}
		ops = append(ops, store.PutOp{Namespace: ns, Key: ev.ID, Value: v, Options: store.PutOptions{Index: []string{"text"}}})
	}
	// Adding a session again replaces what it had: delete, then put.
	if _, err := m.del.DeletePrefix(ctx, ns); err != nil {
		return fmt.Errorf("adk: replace memories: %w", err)
	}
	if len(ops) == 0 {
		return nil
	}
	if _, err := m.st.Batch(ctx, ops); err != nil {
		return fmt.Errorf("adk: add memories: %w", err)
	}
	return nil
}

// eventText joins the text parts of an event's content.
func eventText(ev *session.Event) string {
	if ev == nil || ev.Content == nil {
		return ""
	}
	var parts []string
	for _, p := range ev.Content.Parts {
		if p != nil && strings.TrimSpace(p.Text) != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, " ")
}

// SearchMemory implements memory.Service: the app's and user's memories
// closest in meaning to the query, best first, at most Limit of them, and
// only those scoring at least MinScore (none when nothing is close). A
// store without a semantic index cannot rank and is an error.
func (m *MemoryService) SearchMemory(ctx context.Context, req *memory.SearchRequest) (*memory.SearchResponse, error) {
	if req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("adk: app_name and user_id are required, got %s, %s", checkpointer.NameID("app_name", req.AppName), checkpointer.NameID("user_id", req.UserID))
	}
	res := &memory.SearchResponse{Memories: []memory.Entry{}}
	if strings.TrimSpace(req.Query) == "" {
		return res, nil
	}
	found, err := m.st.Search(ctx, m.userNS(req.AppName, req.UserID), store.SearchOptions{Query: req.Query, Limit: m.limit})
	if err != nil {
		return nil, fmt.Errorf("adk: search memory: %w", err)
	}
	for _, it := range found {
		if it.Score == nil {
			return nil, errors.New("adk: search memory: the store has no semantic index (store.IndexConfig)")
		}
		if *it.Score < m.minScore {
			continue
		}
		e, err := entry(it.Item)
		if err != nil {
			return nil, err
		}
		res.Memories = append(res.Memories, e)
	}
	return res, nil
}

func entry(it store.Item) (memory.Entry, error) {
	e := memory.Entry{ID: it.Key}
	e.Author, _ = it.Value["author"].(string)
	if ns, ok := it.Value["timestamp_ns"].(int64); ok {
		e.Timestamp = time.Unix(0, ns)
	}
	e.CustomMetadata, _ = it.Value["custom"].(map[string]any)
	raw, _ := it.Value["content"].([]byte)
	var c genai.Content
	if err := json.Unmarshal(raw, &c); err != nil {
		return memory.Entry{}, fmt.Errorf("adk: malformed memory %q: %w", it.Key, err)
	}
	e.Content = &c
	return e, nil
}
