package items

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/store"
)

// Base is the part of a store that every driver holds the same way: its
// checked options (Config), its clock, its open or closed state and its TTL
// sweeper, and the first step of each operation — refuse when closed or
// cancelled, then check and prepare the arguments — so that a driver's
// methods start where storage work starts. A driver keeps it in a named
// field (its exported methods must not become the driver's).
type Base struct {
	Config
	now       func() time.Time
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
	stop      chan struct{}
	done      chan struct{}
}

// NewBase checks a driver's options (see NewConfig); now nil means
// time.Now.
func NewBase(driver string, index *store.IndexConfig, ttl *store.TTLConfig, now func() time.Time) (*Base, error) {
	cfg, err := NewConfig(driver, index, ttl)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Base{Config: cfg, now: now, stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// EngineBase returns the Base of a store engine (an *engine.Engine of
// package store/engine, which sets this function when it is initialized;
// it is given as any because this package is below the engine). The
// drivers of this module use it for their operations beyond the seam
// (setup, re-embedding, re-encryption); the engine's exported API names no
// internal type, so that drivers in other modules can implement the seam.
var EngineBase func(e any) *Base

// Now is the store's clock.
func (b *Base) Now() time.Time { return b.now() }

// Refresh resolves a read's refresh-on-read setting: never without a TTL
// config, otherwise the read's override or the config's default.
func (b *Base) Refresh(override *bool) bool {
	return b.TTL != nil && b.TTL.RefreshOnRead(override)
}

// StartSweeper runs sweep in the background at the TTL config's interval
// until Close; without a TTL config, or with a negative interval, it does
// nothing. Call it at most once.
func (b *Base) StartSweeper(sweep func(context.Context) (int, error)) {
	if b.TTL != nil {
		if every := b.TTL.SweepEvery(); every > 0 {
			go store.SweepLoop(every, b.stop, b.done, sweep)
			return
		}
	}
	close(b.done)
}

// Close marks the store closed (every later operation fails with
// store.ErrClosed), waits for the sweeper to stop, then calls release
// (which may be nil) once. Every call returns the first call's result.
func (b *Base) Close(release func() error) error {
	b.closeOnce.Do(func() {
		b.closed.Store(true)
		close(b.stop)
		<-b.done
		if release != nil {
			if err := release(); err != nil {
				b.closeErr = fmt.Errorf("%s: %w", b.Driver, err)
			}
		}
	})
	return b.closeErr
}

// Closed reports whether Close was called.
func (b *Base) Closed() bool { return b.closed.Load() }

// Check fails when the store is closed or ctx is done.
func (b *Base) Check(ctx context.Context) error {
	if b.closed.Load() {
		return fmt.Errorf("%s: %w", b.Driver, store.ErrClosed)
	}
	return ctx.Err()
}

// StartBatch checks the store and plans a batch (see Config.PlanBatch),
// then turns each write into the driver's own form with prepare (which
// adds what the driver stores: an encoded value, vector norms); an error of
// prepare names the op.
func StartBatch[P any](ctx context.Context, b *Base, ops []store.Op, prepare func(context.Context, *Put) (P, error)) (*Plan, []P, error) {
	if err := b.Check(ctx); err != nil {
		return nil, nil, err
	}
	plan, err := b.PlanBatch(ctx, ops)
	if err != nil {
		return nil, nil, err
	}
	puts := make([]P, len(plan.Puts))
	for i, p := range plan.Puts {
		if puts[i], err = prepare(ctx, p); err != nil {
			return nil, nil, fmt.Errorf("%s: op %d: %w", b.Driver, p.Op, err)
		}
	}
	return plan, puts, nil
}

// StartPutIf checks the store and prepares a conditional put (see
// Config.PlanPutIf) in the driver's own form (see StartBatch).
func StartPutIf[P any](ctx context.Context, b *Base, ns store.Namespace, key string, value map[string]any, opts []store.PutOption, prepare func(context.Context, *Put) (P, error)) (P, error) {
	var zero P
	if err := b.Check(ctx); err != nil {
		return zero, err
	}
	p, err := b.PlanPutIf(ctx, ns, key, value, opts)
	if err != nil {
		return zero, err
	}
	out, err := prepare(ctx, p)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", b.Driver, err)
	}
	return out, nil
}

// StartListItems checks the store and a ListItems call, and returns the
// namespace as stored, the page size and the time the listing sees.
func (b *Base) StartListItems(ctx context.Context, ns store.Namespace, opt store.ListItemsOptions) (prefix string, limit int, now time.Time, err error) {
	if err := b.Check(ctx); err != nil {
		return "", 0, now, err
	}
	prefix, limit, err = CheckListItems(ns, opt)
	if err != nil {
		return "", 0, now, fmt.Errorf("%s: %w", b.Driver, err)
	}
	return prefix, limit, b.now(), nil
}

// StartDeletePrefix checks the store and a DeletePrefix call.
func (b *Base) StartDeletePrefix(ctx context.Context, prefix store.Namespace) error {
	if err := b.Check(ctx); err != nil {
		return err
	}
	if err := ValidateDeletePrefix(prefix); err != nil {
		return fmt.Errorf("%s: %w", b.Driver, err)
	}
	return nil
}
