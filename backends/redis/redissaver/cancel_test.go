package redissaver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// freezer is a TCP proxy to a server that, once frozen, stops passing
// commands on: the server then never answers, as a server stuck on a
// disk or cut off by the network. It reports each command it holds.
type freezer struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	frozen bool
	held   chan struct{}
}

func newFreezer(t *testing.T, target string) *freezer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{l: l, target: target, held: make(chan struct{}, 16)}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *freezer) serve(c net.Conn) {
	s, err := net.Dial("tcp", f.target)
	if err != nil {
		_ = c.Close()
		return
	}
	go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if err != nil {
			_ = s.Close()
			return
		}
		f.mu.Lock()
		frozen := f.frozen
		f.mu.Unlock()
		if frozen {
			select {
			case f.held <- struct{}{}:
			default:
			}
			continue
		}
		if _, err := s.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (f *freezer) freeze() {
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
}

// TestCancelBlockedServer: with Options.ReturnOnCancel a read, a put and
// a listing waiting on a server that does not answer return when their
// context is cancelled, with the context's error.
func TestCancelBlockedServer(t *testing.T) {
	srv := redistest.Shared(t, 7)
	f := newFreezer(t, srv.Addr)
	// ContextTimeoutEnabled: without it go-redis bounds a call by its
	// ReadTimeout only, whatever the context's deadline (see the package
	// doc); it never ends a call on a cancellation.
	// No read time-out: only the context can end a call.
	rdb := redis.NewClient(&redis.Options{Addr: f.l.Addr().String(), ContextTimeoutEnabled: true, ReadTimeout: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix(), ReturnOnCancel: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: "t"}
	cp := newCheckpoint(s, 0)
	if _, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	f.freeze()

	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"GetTuple", func(ctx context.Context) error { _, err := s.GetTuple(ctx, cfg); return err }},
		{"Put", func(ctx context.Context) error {
			cp := newCheckpoint(s, 1)
			_, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": 1}, cp.ChannelVersions)
			return err
		}},
		{"List", func(ctx context.Context) error {
			for _, err := range s.List(ctx, &cfg, checkpointer.ListOptions{}) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
	}
	for _, c := range calls {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.call(ctx) }()
		<-f.held // the command is sent and will not be answered
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second): // a liveness bound, not a measure
			t.Fatalf("%s on a server that does not answer did not return in 30s after its context was cancelled", c.name)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a server that does not answer, cancelled: %v, want context.Canceled", c.name, err)
		}
	}
}

// TestCancelDefault: by default (commands in the caller's goroutine) a
// read, a put and a listing waiting on a server that does not answer end
// as a go-redis command does, whose client has a read time-out: a
// cancellation does not end them, the client's ReadTimeout does, with a
// network time-out.
func TestCancelDefault(t *testing.T) {
	srv := redistest.Shared(t, 7)
	f := newFreezer(t, srv.Addr)
	prefix := redistest.Prefix()
	// A saver per call, each on one connection made before the server
	// freezes: a call's command is then the only thing its connection
	// sends (a connection dialled while frozen would send its handshake,
	// and a call cancelled during the handshake ends with the context's
	// error — which is not what this test is about).
	saver := func() *redissaver.Saver {
		rdb := redis.NewClient(&redis.Options{Addr: f.l.Addr().String(), ContextTimeoutEnabled: true, ReadTimeout: 300 * time.Millisecond,
			MaxRetries: -1, PoolSize: 1})
		t.Cleanup(func() { _ = rdb.Close() })
		if err := rdb.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		s, err := redissaver.New(rdb, redissaver.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: "t"}
	s := saver()
	cp := newCheckpoint(s, 0)
	if _, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	get, put, list := saver(), saver(), saver()
	f.freeze()
	calls := map[string]func(context.Context) error{
		"GetTuple": func(ctx context.Context) error { _, err := get.GetTuple(ctx, cfg); return err },
		"Put": func(ctx context.Context) error {
			cp := newCheckpoint(put, 1)
			_, err := put.Put(ctx, cfg, cp, checkpointer.Metadata{"step": 1}, cp.ChannelVersions)
			return err
		},
		"List": func(ctx context.Context) error {
			for _, err := range list.List(ctx, &cfg, checkpointer.ListOptions{}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, call := range calls {
		// What the call before sent is all held by now (it ended at its
		// time-out): its signals are not this call's.
		for len(f.held) > 0 {
			<-f.held
		}
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- call(ctx) }()
		<-f.held // the command is sent and will not be answered
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second): // a liveness bound, not a measure
			t.Fatalf("%s on a server that does not answer did not end at the client's read time-out", name)
		}
		if !isTimeout(err) {
			t.Errorf("%s on a server that does not answer, cancelled: %v, want the client's read time-out", name, err)
		}
	}
}
