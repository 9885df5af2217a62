package trpcagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/log"
	"trpc.group/trpc-go/trpc-agent-go/memory"
	"trpc.group/trpc-go/trpc-agent-go/memory/extractor"
	"trpc.group/trpc-go/trpc-agent-go/model"
	"trpc.group/trpc-go/trpc-agent-go/session"
)

// DefaultAutoMemoryTimeout bounds one extraction (the extractor's model
// call and the writes) when MemoryOptions.AutoMemoryTimeout is 0, as
// tRPC's own worker does.
const DefaultAutoMemoryTimeout = 30 * time.Second

// autoMemoryQueue is how many extractions may wait for the worker; when it
// is full, EnqueueAutoMemoryJob extracts in the caller, as tRPC's worker
// does, rather than drop a conversation.
const autoMemoryQueue = 10

// ErrMemoryServiceClosed is returned by EnqueueAutoMemoryJob after Close.
var ErrMemoryServiceClosed = errors.New("trpcagent: memory service closed")

// autoJob is one extraction: the session's messages since its last one.
type autoJob struct {
	ctx      context.Context
	user     memory.UserKey
	sess     *session.Session
	latest   time.Time
	messages []model.Message
}

// autoMemory runs tRPC's extractor (extractor.MemoryExtractor) on the
// sessions EnqueueAutoMemoryJob is given, in one background worker, and
// applies the operations it returns through the service's own methods.
type autoMemory struct {
	ext     extractor.MemoryExtractor
	timeout time.Duration
	// mu orders enqueues against Close, which closes jobs.
	mu     sync.RWMutex
	jobs   chan autoJob
	closed bool
	done   chan struct{}
}

func newAutoMemory(ext extractor.MemoryExtractor, timeout time.Duration, m *MemoryService) *autoMemory {
	if timeout <= 0 {
		timeout = DefaultAutoMemoryTimeout
	}
	a := &autoMemory{ext: ext, timeout: timeout, jobs: make(chan autoJob, autoMemoryQueue), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for j := range a.jobs {
			// Nobody waits for a background job: its failure is logged,
			// as tRPC's worker logs it, and its messages are offered
			// again with the session's next job.
			if err := m.extract(j, a); err != nil {
				log.WarnfContext(j.ctx, "%v (user %s/%s)", err, j.user.AppName, j.user.UserID)
			}
		}
	}()
	return a
}

// close stops accepting jobs and waits for the queued ones.
func (a *autoMemory) close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.jobs)
	}
	a.mu.Unlock()
	<-a.done
}

// EnqueueAutoMemoryJob implements memory.Service. With
// MemoryOptions.Extractor set, the session's user and assistant messages
// since its last extraction (tRPC's session state
// memory.SessionStateKeyAutoMemoryLastExtractAt) go to the extractor when
// its ShouldExtract agrees; the extractor is given the user's memories
// closest to what the user said (for deduplication) and its add, update,
// delete and clear operations are applied to this service's memories, in
// a background worker (in the caller when its queue is full). Without an
// extractor it does nothing, as a tRPC service without one. Unlike tRPC's
// own worker it does not merge an add into a near-duplicate memory (an
// add of the same text and metadata replaces it, as AddMemory does), nor
// skip sessions marked as holding external context.
func (m *MemoryService) EnqueueAutoMemoryJob(ctx context.Context, sess *session.Session) error {
	a := m.auto
	if a == nil || sess == nil {
		return nil
	}
	user := memory.UserKey{AppName: sess.AppName, UserID: sess.UserID}
	if user.AppName == "" || user.UserID == "" {
		return nil
	}
	since := lastExtractAt(sess)
	latest, messages := messagesSince(sess, since)
	if len(messages) == 0 {
		return nil
	}
	ec := &extractor.ExtractionContext{UserKey: user, Messages: messages}
	if !since.IsZero() {
		s := since.UTC()
		ec.LastExtractAt = &s
	}
	if !a.ext.ShouldExtract(ec) {
		return nil
	}
	j := autoJob{ctx: context.WithoutCancel(ctx), user: user, sess: sess, latest: latest, messages: messages}
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return ErrMemoryServiceClosed
	}
	select {
	case a.jobs <- j:
		a.mu.RUnlock()
		return nil
	default:
	}
	a.mu.RUnlock()
	return m.extract(j, a)
}

// extract runs one job: the existing memories, the extractor, its
// operations, then the session's last-extraction time (only when every
// operation was applied, so that a failed job's messages are offered
// again next time).
func (m *MemoryService) extract(j autoJob, a *autoMemory) error {
	ctx, cancel := context.WithTimeout(j.ctx, a.timeout)
	defer cancel()
	var existing []*memory.Entry
	if q := userText(j.messages); q != "" {
		var err error
		if existing, err = m.SearchMemories(ctx, j.user, q); err != nil {
			return fmt.Errorf("trpcagent: auto memory: existing memories: %w", err)
		}
	}
	ops, err := a.ext.Extract(ctx, j.messages, existing)
	if err != nil {
		return fmt.Errorf("trpcagent: auto memory: extract: %w", err)
	}
	var errs []error
	for _, op := range ops {
		if op == nil {
			continue
		}
		if err := m.apply(ctx, j.user, op); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trpcagent: auto memory: %w", err)
	}
	j.sess.SetState(memory.SessionStateKeyAutoMemoryLastExtractAt, []byte(j.latest.UTC().Format(time.RFC3339Nano)))
	return nil
}

// apply performs one extractor operation with the service's methods.
func (m *MemoryService) apply(ctx context.Context, user memory.UserKey, op *extractor.Operation) error {
	key := memory.Key{AppName: user.AppName, UserID: user.UserID, MemoryID: op.MemoryID}
	md := &memory.Metadata{Kind: op.MemoryKind, EventTime: op.EventTime, Participants: op.Participants, Location: op.Location}
	if md.Kind == "" {
		md.Kind = memory.KindFact
	}
	switch op.Type {
	case extractor.OperationAdd:
		return m.AddMemory(ctx, user, op.Memory, op.Topics, memory.WithMetadata(md))
	case extractor.OperationUpdate:
		return m.UpdateMemory(ctx, key, op.Memory, op.Topics, memory.WithUpdateMetadata(md))
	case extractor.OperationDelete:
		return m.DeleteMemory(ctx, key)
	case extractor.OperationClear:
		return m.ClearMemories(ctx, user)
	}
	return fmt.Errorf("unknown extractor operation %q", op.Type)
}

// lastExtractAt is the session's last extraction time; zero when none (or
// unreadable, as tRPC reads it).
func lastExtractAt(sess *session.Session) time.Time {
	raw, ok := sess.GetState(memory.SessionStateKeyAutoMemoryLastExtractAt)
	if !ok || len(raw) == 0 {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, string(raw))
	if err != nil {
		return time.Time{}
	}
	return t
}

// messagesSince returns the user and assistant messages with content of
// the events after since (tool calls and results left out, as tRPC's
// worker does) and the latest event time.
func messagesSince(sess *session.Session, since time.Time) (time.Time, []model.Message) {
	var latest time.Time
	var out []model.Message
	sess.EventMu.RLock()
	defer sess.EventMu.RUnlock()
	for _, e := range sess.Events {
		if !since.IsZero() && !e.Timestamp.After(since) {
			continue
		}
		if e.Timestamp.After(latest) {
			latest = e.Timestamp
		}
		if e.Response == nil {
			continue
		}
		for _, c := range e.Response.Choices {
			msg := c.Message
			if msg.Role == model.RoleTool || msg.ToolID != "" || len(msg.ToolCalls) > 0 || (msg.Content == "" && len(msg.ContentParts) == 0) {
				continue
			}
			out = append(out, msg)
		}
	}
	return latest, out
}

// userText is what the user said, the query for the existing memories the
// extractor is shown.
func userText(messages []model.Message) string {
	var parts []string
	for _, msg := range messages {
		if msg.Role != model.RoleUser {
			continue
		}
		if t := strings.TrimSpace(msg.Content); t != "" {
			parts = append(parts, t)
		}
		for _, p := range msg.ContentParts {
			if p.Type == model.ContentTypeText && p.Text != nil && strings.TrimSpace(*p.Text) != "" {
				parts = append(parts, strings.TrimSpace(*p.Text))
			}
		}
	}
	return strings.Join(parts, " ")
}
