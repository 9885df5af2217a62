package trpcagent

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/memory"
	"trpc.group/trpc-go/trpc-agent-go/memory/extractor"
	memorytool "trpc.group/trpc-go/trpc-agent-go/memory/tool"
	"trpc.group/trpc-go/trpc-agent-go/tool"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/adapters/shared/recall"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/store"
)

// DefaultMinScore is MemoryService's relevance threshold for a neural
// embedder (an OpenAI-compatible model): the similarity (higher is
// closer, see store.SearchItem.Score) a memory must reach to be returned
// by SearchMemories. The default follows the store's embedder: see
// MemoryOptions.MinScore.
const DefaultMinScore = recall.NeuralMinScore

// DefaultMaxResults is how many memories SearchMemories returns at most
// when neither the call nor MemoryOptions say (tRPC's default).
const DefaultMaxResults = 10

// maxReadLimit caps one ReadMemories page: a caller's number never sizes
// an allocation.
const maxReadLimit = store.MaxLimit

// MemoryOptions configures a MemoryService. The zero value is usable.
type MemoryOptions struct {
	// Prefix is the namespace under which memories live; nil means
	// {"trpc"}. Each user's memories are under <prefix> <app> memories
	// <user>.
	Prefix store.Namespace
	// MinScore is the default SimilarityThreshold of SearchMemories. 0
	// means the default for the store's embedder (store.EmbedderNamer):
	// 0.10 for memvault's offline hashing embedder, which scores a memory
	// sharing one word with a short query from 0.12 (a long memory) to
	// 0.30; DefaultMinScore
	// (0.25) for an OpenAI-compatible model; for another embedder no
	// threshold — the best MaxResults memories are returned, ranked.
	MinScore float64
	// MaxResults is the default MaxResults of SearchMemories; 0 means
	// DefaultMaxResults.
	MaxResults int
	// Tools names the memory tools Tools returns (memory.AddToolName, …);
	// nil means tRPC's defaults: add, update, search and load.
	Tools []string
	// Extractor, when set, extracts memories from each session the runner
	// gives EnqueueAutoMemoryJob (tRPC's auto memory mode; its
	// extractor.NewExtractor asks a model). nil: EnqueueAutoMemoryJob does
	// nothing, as in a tRPC service without an extractor.
	Extractor extractor.MemoryExtractor
	// AutoMemoryTimeout bounds one extraction; 0 means
	// DefaultAutoMemoryTimeout.
	AutoMemoryTimeout time.Duration
}

// MemoryService is a tRPC-Agent-Go memory.Service on a memvault store with
// a semantic index (store.IndexConfig): each memory is one item, its text
// embedded, and SearchMemories ranks by meaning through the store's
// embedder. With an encrypting store each memory is sealed and bound to
// its user's namespace and id.
type MemoryService struct {
	st         store.Store
	del        store.PrefixDeleter
	cas        store.ConditionalPutter
	lister     store.Lister
	prefix     store.Namespace
	minScore   float64
	maxResults int
	tools      []tool.Tool
	auto       *autoMemory // nil without an extractor
}

var _ memory.Service = (*MemoryService)(nil)

// memoryTools are the tools tRPC's memory package makes, by name.
var memoryTools = map[string]func() tool.Tool{
	memory.AddToolName:    func() tool.Tool { return memorytool.NewAddTool() },
	memory.UpdateToolName: func() tool.Tool { return memorytool.NewUpdateTool() },
	memory.DeleteToolName: func() tool.Tool { return memorytool.NewDeleteTool() },
	memory.ClearToolName:  func() tool.Tool { return memorytool.NewClearTool() },
	memory.SearchToolName: func() tool.Tool { return memorytool.NewSearchTool() },
	memory.LoadToolName:   func() tool.Tool { return memorytool.NewLoadTool() },
}

// NewMemoryService returns the memory service of st, which must be a
// store.PrefixDeleter, store.ConditionalPutter and store.Lister (every
// memvault store is) configured with an index.
func NewMemoryService(st store.Store, opts MemoryOptions) (*MemoryService, error) {
	del, ok := st.(store.PrefixDeleter)
	if !ok {
		return nil, fmt.Errorf("trpcagent: store %T cannot delete by prefix", st)
	}
	cas, ok := st.(store.ConditionalPutter)
	if !ok {
		return nil, fmt.Errorf("trpcagent: store %T has no conditional put", st)
	}
	lister, ok := st.(store.Lister)
	if !ok {
		return nil, fmt.Errorf("trpcagent: store %T cannot list items", st)
	}
	prefix := opts.Prefix
	if prefix == nil {
		prefix = store.Namespace{"trpc"}
	}
	if err := prefix.Validate(); err != nil {
		return nil, fmt.Errorf("trpcagent: prefix: %w", err)
	}
	if opts.MinScore < 0 || opts.MaxResults < 0 {
		return nil, fmt.Errorf("trpcagent: negative MinScore %v or MaxResults %d", opts.MinScore, opts.MaxResults)
	}
	m := &MemoryService{st: st, del: del, cas: cas, lister: lister, prefix: prefix, minScore: opts.MinScore, maxResults: min(opts.MaxResults, store.MaxLimit)}
	if m.minScore == 0 {
		m.minScore = math.Inf(-1) // an embedder not known: rank
		if s, ok := recall.MinScore(st); ok {
			m.minScore = s
		}
	}
	if m.maxResults == 0 {
		m.maxResults = DefaultMaxResults
	}
	names := opts.Tools
	if names == nil {
		names = []string{memory.AddToolName, memory.UpdateToolName, memory.SearchToolName, memory.LoadToolName}
	}
	names = slices.Clone(names)
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		mk, ok := memoryTools[n]
		if !ok {
			return nil, fmt.Errorf("trpcagent: unknown memory tool %q", n)
		}
		m.tools = append(m.tools, mk())
	}
	if opts.Extractor != nil {
		m.auto = newAutoMemory(opts.Extractor, opts.AutoMemoryTimeout, m)
	}
	return m, nil
}

func (m *MemoryService) userNS(app, user string) store.Namespace {
	ns := append(store.Namespace(nil), m.prefix...)
	return append(ns, labels.Escape(app), "memories", labels.Escape(user))
}

// AddMemory implements memory.Service. A memory's id is derived from its
// text, user and episodic metadata (not its topics), as tRPC derives it, so
// adding the same memory again replaces it — but under a key of the user's
// own (see memoryID), so that the id, which is stored in plaintext, does
// not confirm a guess of the text. A memory stored under the unkeyed id of
// versions before is not replaced (it is added beside it) until
// MigrateMemoryIDs has moved it.
func (m *MemoryService) AddMemory(ctx context.Context, userKey memory.UserKey, text string, topics []string, opts ...memory.AddOption) error {
	if err := userKey.CheckUserKey(); err != nil {
		return err
	}
	mem := &memory.Memory{Memory: text, Topics: topics}
	if md := memory.ResolveAddOptions(opts); md != nil {
		mem.Kind, mem.EventTime, mem.Participants, mem.Location = md.Kind, md.EventTime, md.Participants, md.Location
		if mem.Kind == "" && (mem.EventTime != nil || len(mem.Participants) > 0 || strings.TrimSpace(mem.Location) != "") {
			mem.Kind = memory.KindFact
		}
	}
	now := time.Now()
	mem.LastUpdated = &now
	normalize(mem)
	id, err := m.memoryID(ctx, mem, userKey.AppName, userKey.UserID)
	if err != nil {
		return fmt.Errorf("trpcagent: add memory: %w", err)
	}
	// The same memory under its unkeyed id (versions before) is not looked
	// up here: with the audit trail on, the read would record that digest
	// of every new memory's text for good. MigrateMemoryIDs moves those.
	if err := m.st.Put(ctx, m.userNS(userKey.AppName, userKey.UserID), id, memoryValue(mem), store.WithIndex("memory")); err != nil {
		return fmt.Errorf("trpcagent: add memory: %w", err)
	}
	return nil
}

// UpdateMemory implements memory.Service: the memory's text and topics are
// replaced and its metadata patched (zero fields keep theirs); when that
// changes its id, the memory moves to the new id in one batch, unless a
// memory already holds it.
func (m *MemoryService) UpdateMemory(ctx context.Context, key memory.Key, text string, topics []string, opts ...memory.UpdateOption) error {
	if err := key.CheckMemoryKey(); err != nil {
		return err
	}
	ns := m.userNS(key.AppName, key.UserID)
	it, err := m.st.Get(ctx, ns, key.MemoryID)
	if err != nil {
		return fmt.Errorf("trpcagent: update memory: %w", err)
	}
	if it == nil {
		return fmt.Errorf("trpcagent: memory with %s not found", checkpointer.NameID("id", key.MemoryID))
	}
	mem, err := memoryOf(it)
	if err != nil {
		return err
	}
	mem.Memory, mem.Topics = text, topics
	if md := memory.ResolveUpdateOptions(opts); md != nil {
		if md.Kind != "" {
			mem.Kind = md.Kind
		}
		if md.EventTime != nil {
			mem.EventTime = md.EventTime
		}
		if len(md.Participants) > 0 {
			mem.Participants = md.Participants
		}
		if loc := strings.TrimSpace(md.Location); loc != "" {
			mem.Location = loc
		}
	}
	now := time.Now()
	mem.LastUpdated = &now
	normalize(mem)
	newID, err := m.memoryID(ctx, mem, key.AppName, key.UserID)
	if err != nil {
		return fmt.Errorf("trpcagent: update memory: %w", err)
	}
	ops := []store.Op{store.PutOp{Namespace: ns, Key: newID, Value: memoryValue(mem), Options: store.PutOptions{Index: []string{"memory"}}}}
	if newID != key.MemoryID {
		taken, err := m.st.Get(ctx, ns, newID)
		if err != nil {
			return fmt.Errorf("trpcagent: update memory: %w", err)
		}
		if taken != nil {
			return fmt.Errorf("trpcagent: memory with id %s already exists", newID)
		}
		ops = append(ops, store.PutOp{Namespace: ns, Key: key.MemoryID}) // a nil value deletes
	}
	if _, err := m.st.Batch(ctx, ops); err != nil {
		return fmt.Errorf("trpcagent: update memory: %w", err)
	}
	if r := memory.ResolveUpdateResult(opts); r != nil {
		r.MemoryID = newID
	}
	return nil
}

// DeleteMemory implements memory.Service; a missing memory is an error, as
// in tRPC's in-memory service.
func (m *MemoryService) DeleteMemory(ctx context.Context, key memory.Key) error {
	if err := key.CheckMemoryKey(); err != nil {
		return err
	}
	ns := m.userNS(key.AppName, key.UserID)
	it, err := m.st.Get(ctx, ns, key.MemoryID)
	if err != nil {
		return fmt.Errorf("trpcagent: delete memory: %w", err)
	}
	if it == nil {
		return fmt.Errorf("trpcagent: memory with %s not found", checkpointer.NameID("id", key.MemoryID))
	}
	if err := m.st.Delete(ctx, ns, key.MemoryID); err != nil {
		return fmt.Errorf("trpcagent: delete memory: %w", err)
	}
	return nil
}

// ClearMemories implements memory.Service: every memory of the user goes.
func (m *MemoryService) ClearMemories(ctx context.Context, userKey memory.UserKey) error {
	if err := userKey.CheckUserKey(); err != nil {
		return err
	}
	if _, err := m.del.DeletePrefix(ctx, m.userNS(userKey.AppName, userKey.UserID)); err != nil {
		return fmt.Errorf("trpcagent: clear memories: %w", err)
	}
	return nil
}

// MigrateMemoryIDs moves every memory that earlier versions
// stored under its unkeyed id (the plain SHA-256 of its text, app and
// user, which anyone holding a copy of the database could test a guessed
// text against) to its keyed id (see AddMemory), and returns how many it
// moved; a memory already held under its keyed id (added again since)
// wins, and the old item goes. Until then such memories are read and
// searched as before, each moves when it is updated, and adding one again
// adds a second copy, which the migration then merges.
// Run it once after upgrading every process; running it again moves
// nothing. Copies of the database taken before keep the old ids.
func (m *MemoryService) MigrateMemoryIDs(ctx context.Context) (int, error) {
	pat := append(m.prefix.Clone(), "*", "memories")
	nss, err := m.st.ListNamespaces(ctx, store.ListNamespacesOptions{Prefix: pat, MaxDepth: len(pat) + 1, Limit: store.MaxLimit})
	if err != nil {
		return 0, fmt.Errorf("trpcagent: migrate memory ids: %w", err)
	}
	n := 0
	for _, ns := range nss {
		if len(ns) != len(pat)+1 {
			continue
		}
		app, err1 := labels.Unescape(ns[len(m.prefix)])
		user, err2 := labels.Unescape(ns[len(pat)])
		if err1 != nil || err2 != nil {
			continue // not a namespace this service made
		}
		moved, err := m.migrateUser(ctx, ns, app, user)
		n += moved
		if err != nil {
			return n, fmt.Errorf("trpcagent: migrate memory ids of %s: %w", ns, err)
		}
	}
	return n, nil
}

// migrateUser is MigrateMemoryIDs for one user's namespace ns.
func (m *MemoryService) migrateUser(ctx context.Context, ns store.Namespace, app, user string) (int, error) {
	const page = 500
	n := 0
	var key []byte
	for after := ""; ; {
		items, err := m.lister.ListItems(ctx, ns, store.ListItemsOptions{After: after, Limit: page})
		if err != nil || len(items) == 0 {
			return n, err
		}
		after = items[len(items)-1].Key
		for i := range items {
			it := &items[i]
			mem, err := memoryOf(it)
			if err != nil || it.Key != legacyMemoryID(mem, app, user) {
				continue // not a memory, or already keyed
			}
			if key == nil {
				if key, err = m.idKeyOf(ctx, app, user); err != nil {
					return n, err
				}
			}
			id := keyedID(key, mem, app, user)
			ops := []store.Op{store.PutOp{Namespace: ns, Key: it.Key}} // a nil value deletes
			if cur, err := m.st.Get(ctx, ns, id, store.WithRefreshTTL(false)); err != nil {
				return n, err
			} else if cur == nil {
				ops = append(ops, store.PutOp{Namespace: ns, Key: id, Value: it.Value, Options: store.PutOptions{Index: []string{"memory"}}})
			}
			if _, err := m.st.Batch(ctx, ops); err != nil {
				return n, err
			}
			n++
		}
	}
}

// ReadMemories implements memory.Reader: the user's memories, most recently
// updated first, at most limit of them (0 or less: all, in pages).
func (m *MemoryService) ReadMemories(ctx context.Context, userKey memory.UserKey, limit int) ([]*memory.Entry, error) {
	if err := userKey.CheckUserKey(); err != nil {
		return nil, err
	}
	ns := m.userNS(userKey.AppName, userKey.UserID)
	out := []*memory.Entry{}
	for offset := 0; ; {
		page := maxReadLimit
		if limit > 0 {
			page = min(limit-len(out), maxReadLimit)
		}
		// Without a query the store returns the newest update first.
		found, err := m.st.Search(ctx, ns, store.SearchOptions{Limit: page, Offset: offset})
		if err != nil {
			return nil, fmt.Errorf("trpcagent: read memories: %w", err)
		}
		for _, it := range found {
			e, err := m.entry(userKey, it)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		offset += len(found)
		if len(found) < page || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
	}
}

// SearchMemories implements memory.Reader: the user's memories closest in
// meaning to query, best first. Of tRPC's search options it honours Kind
// (with KindFallback), TimeAfter/TimeBefore (on the event time),
// MaxResults, SimilarityThreshold and OrderByEventTime (a tie-breaker);
// HybridSearch and Deduplicate are not supported and refused rather than
// ignored. A store without a semantic index cannot rank and is an error.
func (m *MemoryService) SearchMemories(ctx context.Context, userKey memory.UserKey, query string, opts ...memory.SearchOption) ([]*memory.Entry, error) {
	if err := userKey.CheckUserKey(); err != nil {
		return nil, err
	}
	o := memory.ResolveSearchOptions(query, opts)
	if o.HybridSearch || o.Deduplicate {
		return nil, errors.New("trpcagent: search memories: hybrid search and deduplication are not supported")
	}
	if strings.TrimSpace(o.Query) == "" {
		return []*memory.Entry{}, nil
	}
	limit := m.maxResults
	if o.MaxResults > 0 {
		limit = min(o.MaxResults, store.MaxLimit)
	}
	threshold := m.minScore
	if o.SimilarityThreshold > 0 {
		threshold = o.SimilarityThreshold
	}
	filter := map[string]any{}
	if o.TimeAfter != nil || o.TimeBefore != nil {
		r := map[string]any{}
		if o.TimeAfter != nil {
			r["$gte"] = o.TimeAfter.UnixNano()
		}
		if o.TimeBefore != nil {
			r["$lte"] = o.TimeBefore.UnixNano()
		}
		filter["event_time_ns"] = r
	}
	search := func(kind memory.Kind) ([]*memory.Entry, error) {
		f := filter
		if kind != "" {
			f = map[string]any{"kind": string(kind)}
			for k, v := range filter {
				f[k] = v
			}
		}
		found, err := m.st.Search(ctx, m.userNS(userKey.AppName, userKey.UserID), store.SearchOptions{Query: o.Query, Filter: f, Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("trpcagent: search memories: %w", err)
		}
		var out []*memory.Entry
		for _, it := range found {
			if it.Score == nil {
				return nil, errors.New("trpcagent: search memories: the store has no semantic index (store.IndexConfig)")
			}
			if *it.Score < threshold {
				continue
			}
			e, err := m.entry(userKey, it)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	out, err := search(o.Kind)
	if err != nil {
		return nil, err
	}
	if o.Kind != "" && o.KindFallback && len(out) < limit {
		// The requested kind first, then the best of the others.
		rest, err := search("")
		if err != nil {
			return nil, err
		}
		for _, e := range rest {
			if len(out) == limit {
				break
			}
			if e.Memory.Kind != o.Kind {
				out = append(out, e)
			}
		}
	}
	if o.OrderByEventTime {
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].Score != out[j].Score {
				return false // relevance first; event time only breaks ties
			}
			a, b := out[i].Memory.EventTime, out[j].Memory.EventTime
			return a != nil && (b == nil || a.Before(*b))
		})
	}
	if out == nil {
		out = []*memory.Entry{}
	}
	return out, nil
}

// Tools implements memory.Service: tRPC's memory tools named in
// MemoryOptions.Tools; they reach this service through the invocation.
func (m *MemoryService) Tools() []tool.Tool { return slices.Clone(m.tools) }

// Close implements memory.Service: it waits for the extractions
// EnqueueAutoMemoryJob queued; the store stays open (its owner closes it).
func (m *MemoryService) Close() error {
	if m.auto != nil {
		m.auto.close()
	}
	return nil
}

// normalize canonicalizes episodic metadata as tRPC does: trimmed,
// deduplicated (case-insensitively) and sorted participants, a trimmed
// location, and "fact" for a memory of no kind.
func normalize(mem *memory.Memory) {
	mem.Location = strings.TrimSpace(mem.Location)
	var ps []string
	for _, p := range mem.Participants {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		li, lj := strings.ToLower(ps[i]), strings.ToLower(ps[j])
		if li != lj {
			return li < lj
		}
		return ps[i] < ps[j]
	})
	mem.Participants = slices.CompactFunc(ps, strings.EqualFold)
	if len(mem.Participants) == 0 {
		mem.Participants = nil
	}
	if mem.Kind == "" {
		mem.Kind = memory.KindFact
	}
}

// idKeyItem is the key of the item that holds a user's memory-id key, in
// the user's state namespace of the service's prefix
// (<prefix>.<app>.user-state.<user>): a namespace of the user's that
// SubjectNamespaces covers, so that with per-subject keys the id key is
// sealed under the user's data key and `memvault forget` erases it with
// her memories; and one that no listing or search of her memories reads.
const idKeyItem = "memory-id-key"

// memoryID is the id of a normalized memory: an HMAC-SHA256, under the
// user's memory-id key (idKey), of its text, app, user and episodic
// identity, so that the same memory gets the same id and distinct
// episodes with the same text do not. tRPC's services use the plain
// SHA-256 of the same text; stored as a key, in plaintext, that let anyone
// with a copy of the database confirm a guessed memory by hashing it (and
// kept doing so in backups after the user's erasure).
func (m *MemoryService) memoryID(ctx context.Context, mem *memory.Memory, app, user string) (string, error) {
	key, err := m.idKeyOf(ctx, app, user)
	if err != nil {
		return "", err
	}
	return keyedID(key, mem, app, user), nil
}

// keyedID is memoryID under key.
func keyedID(key []byte, mem *memory.Memory, app, user string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(memoryIdentity(mem, app, user)))
	return hex.EncodeToString(mac.Sum(nil))
}

// legacyMemoryID is the id earlier versions gave a memory (and
// tRPC's own services give): the unkeyed SHA-256 of its identity. It is
// computed only to find such a memory and move it (AddMemory,
// MigrateMemoryIDs).
func legacyMemoryID(mem *memory.Memory, app, user string) string {
	sum := sha256.Sum256([]byte(memoryIdentity(mem, app, user)))
	return hex.EncodeToString(sum[:])
}

// idKeyNS is the namespace of user's memory-id key in app (see idKeyItem).
func (m *MemoryService) idKeyNS(app, user string) store.Namespace {
	ns := append(store.Namespace(nil), m.prefix...)
	return append(ns, labels.Escape(app), "user-state", labels.Escape(user))
}

// idKeyOf returns user's memory-id key in app: 32 random bytes stored
// once, with no expiry, by the first service that needs them; services
// racing to store it agree on the one stored first (a conditional put on
// its absence), so every process gives a memory the same id.
func (m *MemoryService) idKeyOf(ctx context.Context, app, user string) ([]byte, error) {
	ns := m.idKeyNS(app, user)
	for {
		it, err := m.st.Get(ctx, ns, idKeyItem, store.WithRefreshTTL(false))
		if err != nil {
			return nil, fmt.Errorf("memory-id key: %w", err)
		}
		if it != nil {
			k, ok := it.Value["key"].([]byte)
			if !ok || len(k) != 32 {
				return nil, fmt.Errorf("memory-id key: malformed item %s/%s", ns, idKeyItem)
			}
			return k, nil
		}
		k := make([]byte, 32)
		_, _ = rand.Read(k) // never fails (crypto/rand)
		err = m.cas.PutIf(ctx, ns, idKeyItem, map[string]any{"key": k}, store.PutCondition{}, store.WithoutIndex(), store.WithTTL(0))
		if err == nil {
			return k, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("memory-id key: %w", err)
		}
		// Another service stored it first: read theirs.
	}
}

// memoryIdentity is the text a memory's id is made from.
func memoryIdentity(mem *memory.Memory, app, user string) string {
	var b strings.Builder
	b.WriteString("memory:" + mem.Memory + "|app:" + app + "|user:" + user)
	episodic := mem.EventTime != nil || len(mem.Participants) > 0 || mem.Location != ""
	if mem.Kind != memory.KindFact || episodic {
		b.WriteString("|kind:" + string(mem.Kind))
	}
	if mem.EventTime != nil {
		b.WriteString("|event_time:" + mem.EventTime.UTC().Format(time.RFC3339))
	}
	if len(mem.Participants) > 0 {
		b.WriteString("|participants:" + strings.Join(mem.Participants, ","))
	}
	if mem.Location != "" {
		b.WriteString("|location:" + mem.Location)
	}
	return b.String()
}

// memoryValue is the stored form of a memory: its text (the embedded
// field), kind and event time as filterable fields, the rest as is.
func memoryValue(mem *memory.Memory) map[string]any {
	v := map[string]any{
		"memory": mem.Memory,
		"topics": strings2any(mem.Topics),
		"kind":   string(mem.Kind),
	}
	if mem.LastUpdated != nil {
		v["last_updated_ns"] = mem.LastUpdated.UnixNano()
	}
	if mem.EventTime != nil {
		v["event_time_ns"] = mem.EventTime.UnixNano()
	}
	if len(mem.Participants) > 0 {
		v["participants"] = strings2any(mem.Participants)
	}
	if mem.Location != "" {
		v["location"] = mem.Location
	}
	return v
}

// memoryOf reads a stored memory back.
func memoryOf(it *store.Item) (*memory.Memory, error) {
	text, ok := it.Value["memory"].(string)
	if !ok {
		return nil, fmt.Errorf("trpcagent: malformed memory %q", it.Key)
	}
	mem := &memory.Memory{Memory: text}
	kind, _ := it.Value["kind"].(string)
	mem.Kind = memory.Kind(kind)
	mem.Topics = any2strings(it.Value["topics"])
	mem.Participants = any2strings(it.Value["participants"])
	mem.Location, _ = it.Value["location"].(string)
	if ns, ok := it.Value["last_updated_ns"].(int64); ok {
		t := time.Unix(0, ns).UTC()
		mem.LastUpdated = &t
	}
	if ns, ok := it.Value["event_time_ns"].(int64); ok {
		t := time.Unix(0, ns).UTC()
		mem.EventTime = &t
	}
	return mem, nil
}

func (m *MemoryService) entry(userKey memory.UserKey, it store.SearchItem) (*memory.Entry, error) {
	mem, err := memoryOf(&it.Item)
	if err != nil {
		return nil, err
	}
	e := &memory.Entry{ID: it.Key, AppName: userKey.AppName, UserID: userKey.UserID, Memory: mem, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	if it.Score != nil {
		e.Score = *it.Score
	}
	return e, nil
}

func strings2any(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// any2strings reads a stored list of strings; it is nil when empty.
func any2strings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
