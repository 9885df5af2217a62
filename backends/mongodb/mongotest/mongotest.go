package mongotest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ErrStart is wrapped by the error of a server that did not start.
var ErrStart = errors.New("mongotest: FerretDB did not start")

// Server is a running FerretDB.
type Server struct {
	// URI is the server's mongodb:// URI (loopback, no credentials).
	URI string

	cmd   *exec.Cmd
	stdin io.WriteCloser
	dir   string
}

// Start builds ferretsrv (the go command's build cache makes every build
// but the first a link) and starts it with its SQLite backend in a new
// temporary directory, on a free loopback port. Stop it with Stop, which
// removes the directory; the server also stops when this process ends.
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "memvault-ferretdb-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	s := &Server{dir: dir}
	if err := s.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	return s, nil
}

func (s *Server) start() error {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return errors.New("no source location for ferretsrv")
	}
	bin := filepath.Join(s.dir, "ferretsrv")
	build := exec.Command("go", "build", "-o", bin, "./ferretsrv")
	build.Dir = filepath.Dir(file)
	// The server is built as a program, never with the tests' -race.
	build.Env = append(os.Environ(), "GOFLAGS=")
	unlock := lockBuild()
	out, err := build.CombinedOutput()
	unlock()
	if err != nil {
		return fmt.Errorf("go build ./ferretsrv: %w\n%s", err, out)
	}
	data := filepath.Join(s.dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return err
	}
	s.cmd = exec.Command(bin, "-dir", data)
	s.cmd.Stderr = os.Stderr
	stdin, err := s.cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	s.stdin = stdin
	if err := s.cmd.Start(); err != nil {
		return err
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(l)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s.URI = <-line:
	case <-time.After(60 * time.Second):
	}
	if !strings.HasPrefix(s.URI, "mongodb://") {
		s.Stop()
		return fmt.Errorf("ferretsrv printed no URI (%q)", s.URI)
	}
	return nil
}

// Stop stops the server and removes its data.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.stdin.Close()
		exited := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-exited
		}
	}
	_ = os.RemoveAll(s.dir)
}

var (
	mu     sync.Mutex
	shared *Server
)

// Main runs a package's tests with one shared server, started on first
// use by Database and stopped when the tests end. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	if shared != nil {
		shared.Stop()
	}
	mu.Unlock()
	os.Exit(code)
}

// URI returns the shared server's URI, starting it on first use (see
// Main, which stops it).
func URI(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if shared == nil {
		s, err := Start()
		if err != nil {
			t.Fatal(err)
		}
		shared = s
	}
	return shared.URI
}

// Database returns a new, empty database of its own on the shared server
// (a random name), with a client closed and the database dropped when t
// ends.
func Database(t testing.TB) *mongo.Database {
	t.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI(URI(t)))
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	db := client.Database("t" + hex.EncodeToString(b[:]))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = db.Drop(ctx)
		_ = client.Disconnect(ctx)
	})
	return db
}
