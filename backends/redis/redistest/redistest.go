// Package redistest runs real Redis servers for tests and examples: a
// throwaway redis-server in a process of its own, on a free loopback port,
// with its files in a temporary directory, stopped when the test ends.
// It is the Redis counterpart of memvaulttest/pgtest and
// backends/mongodb/mongotest.
//
// Two servers are expected, both installed by scripts/install-deps.sh:
//
//   - Redis 8 (8.0.6, built from Debian sid's "redis" source package into
//     /opt/memvault/redis8), which has vector sets but no JSON or search
//     module;
//   - Redis 7 (7.0.15, Debian bookworm's, unpacked into
//     /opt/memvault/redis7), which has neither vector sets nor hash-field
//     expiry.
//
// MEMVAULT_REDIS8 and MEMVAULT_REDIS7 name other redis-server binaries.
// A missing server skips the tests that need it, except in CI (CI=true),
// where it fails them: a CI run that silently tested nothing would pass.
//
// Use Main from a package's TestMain and Shared or Start in the tests.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrStart is wrapped by the error of a server that did not start.
var ErrStart = errors.New("redistest: redis-server did not start")

// ErrNoServer is wrapped by the error of a server version that is not
// installed.
var ErrNoServer = errors.New("redistest: redis-server not installed")

// Versions are the server major versions the tests run on, newest first.
var Versions = []int{8, 7}

// prefixes are where scripts/install-deps.sh puts the servers.
var prefixes = map[int]string{
	7: "/opt/memvault/redis7",
	8: "/opt/memvault/redis8",
}

// Binary returns the path of the redis-server of major version v: the
// MEMVAULT_REDIS<v> environment variable, else the install prefix. The
// binary is run with --version to check its major version.
func Binary(v int) (string, error) {
	bin := os.Getenv("MEMVAULT_REDIS" + strconv.Itoa(v))
	if bin == "" {
		p, ok := prefixes[v]
		if !ok {
			return "", fmt.Errorf("%w: no Redis %d is known", ErrNoServer, v)
		}
		bin = filepath.Join(p, "bin", "redis-server")
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%w: Redis %d (%s): %w; run scripts/install-deps.sh", ErrNoServer, v, bin, err)
	}
	if !strings.Contains(string(out), " v="+strconv.Itoa(v)+".") {
		return "", fmt.Errorf("%w: %s is not Redis %d: %s", ErrNoServer, bin, v, strings.TrimSpace(string(out)))
	}
	return bin, nil
}

// Options configure a server.
type Options struct {
	// Version is the major version (7 or 8); 0 means 8.
	Version int
	// AppendOnly turns the append-only file on with appendfsync always:
	// every acknowledged write is on disk. Off, the server keeps nothing
	// (--save '' and no AOF).
	AppendOnly bool
	// Dir is the data directory; "" makes a temporary one that Stop
	// removes. A restart on the same Dir reads what the server wrote.
	Dir string
	// Args are further redis-server arguments ("--cluster-enabled", "yes").
	Args []string
}

// Server is a running redis-server.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// Dir is the data directory.
	Dir string

	opt     Options
	bin     string
	ownDir  bool
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool
}

// Start starts a redis-server with opt on a free loopback port. Stop it
// with Stop.
func Start(opt Options) (*Server, error) {
	return startOn(opt, "")
}

// startOn starts a server on port ("" for a free one).
func startOn(opt Options, port string) (*Server, error) {
	if opt.Version == 0 {
		opt.Version = 8
	}
	bin, err := Binary(opt.Version)
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, bin: bin, Dir: opt.Dir}
	if s.Dir == "" {
		dir, err := os.MkdirTemp("", "memvault-redis-")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStart, err)
		}
		s.Dir, s.ownDir = dir, true
	}
	var last error
	for range 5 { // a port taken between the probe and the bind: try another
		if last = s.start(port); last == nil {
			return s, nil
		}
		if port != "" {
			break
		}
	}
	s.Stop()
	return nil, fmt.Errorf("%w: %w", ErrStart, last)
}

// start runs the server on port ("" for a free one) and waits for PONG.
func (s *Server) start(port string) error {
	if port == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		_, port, _ = net.SplitHostPort(l.Addr().String())
		_ = l.Close()
	}
	args := []string{"--port", port, "--bind", "127.0.0.1", "--dir", s.Dir, "--save", "",
		"--daemonize", "no", "--logfile", filepath.Join(s.Dir, "redis.log"), "--protected-mode", "yes"}
	if s.opt.AppendOnly {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	args = append(args, s.opt.Args...)
	cmd := exec.Command(s.bin, args...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.exited, s.stopped = cmd, make(chan struct{}), false
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(cmd, s.exited)
	s.Addr = net.JoinHostPort("127.0.0.1", port)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer func() { _ = c.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			return fmt.Errorf("redis-server exited: %s", lastLines(string(log), 5))
		default:
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("no PONG from %s in 30s: %w", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// kill sends SIGKILL and waits for the process.
func (s *Server) kill() {
	if s.cmd != nil && !s.stopped {
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.stopped = true
	}
}

// Kill kills the server with SIGKILL (kill -9): what it had not written
// to disk is lost. Restart starts it again on the same port and data.
func (s *Server) Kill() { s.kill() }

// Restart starts the server again, after Kill or Stop, on the same port
// and data directory.
func (s *Server) Restart() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	if err := s.start(port); err != nil {
		return fmt.Errorf("%w: %w", ErrStart, err)
	}
	return nil
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and removes a
// data directory Start made.
func (s *Server) Stop() {
	if s.cmd != nil && !s.stopped {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		s.stopped = true
	}
	if s.ownDir {
		_ = os.RemoveAll(s.Dir)
	}
}

// Client returns a client of the server, closed when t ends. Its read
// and write timeouts are 30 s, not go-redis's 3 s: an 8 MiB value under
// the race detector on a loaded 2-core machine took longer than 3 s, and
// the client then failed the test with an i/o timeout though the server
// was only slow. Tests of what a timeout does make clients of their own.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var (
	mu     sync.Mutex
	shared = map[int]*Server{}
	failed = map[int]error{}
)

// Main runs a package's tests with one shared server per version, started
// on first use by Shared and stopped when the tests end. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	for _, s := range shared {
		s.Stop()
	}
	mu.Unlock()
	os.Exit(code)
}

// Require returns the path of Redis v's server, or ends t: skipped when it
// is not installed, failed when it is not installed in CI (CI=true).
func Require(t testing.TB, v int) string {
	t.Helper()
	bin, err := Binary(v)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: a missing server fails)", err)
		}
		t.Skip(err)
	}
	return bin
}

// StartT starts a server of its own for t, stopped when t ends; it skips
// or fails t as Require does when the version is not installed.
func StartT(t testing.TB, opt Options) *Server {
	t.Helper()
	if opt.Version == 0 {
		opt.Version = 8
	}
	Require(t, opt.Version)
	s, err := Start(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Shared returns the shared server of version v (no persistence),
// starting it on first use (see Main, which stops it); it skips or fails
// t as Require does when the version is not installed.
func Shared(t testing.TB, v int) *Server {
	t.Helper()
	Require(t, v)
	mu.Lock()
	defer mu.Unlock()
	if err := failed[v]; err != nil {
		t.Fatal(err)
	}
	if s := shared[v]; s != nil {
		return s
	}
	s, err := Start(Options{Version: v})
	if err != nil {
		failed[v] = err
		t.Fatal(err)
	}
	shared[v] = s
	return s
}

// Prefix returns a new random key prefix, so that tests sharing a server
// do not see each other's keys.
func Prefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:])
}
