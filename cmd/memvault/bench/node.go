package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// jsMode is the bench column of JS LangGraph's PostgresSaver.
const jsMode = "langgraph-js"

// sliceRunner measures one slice of a row itself, for a mode whose client is
// not Go code in this process.
type sliceRunner func(ctx context.Context, op string, conc int, d time.Duration) (sample, error)

// jsBench drives interop/js/bench.mjs: a Node process running JS
// LangGraph's PostgresSaver on the bench's schema, one slice per request.
type jsBench struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr bytes.Buffer
	mu     sync.Mutex
}

// startJSBench starts node on dir/bench.mjs (dir holds interop/js with its
// node_modules) and has it set up the schema and seed its read thread with
// fixture's channel values.
func startJSBench(ctx context.Context, dir string, pool *pgxpool.Pool, schema string, maxConc int, fixture map[string]any) (*jsBench, error) {
	j, err := startNode(ctx, dir)
	if err != nil {
		return nil, err
	}
	var ok struct {
		OK bool `json:"ok"`
	}
	// The connection string travels on stdin, not in argv, so a password
	// never shows in the process list.
	init := map[string]any{"cmd": "init", "dsn": nodeDSN(pool), "schema": schema, "max_conc": maxConc, "fixture": fixture}
	if err := j.call(init, &ok); err != nil {
		_ = j.Close()
		return nil, err
	}
	return j, nil
}

// startNode starts node on dir/bench.mjs, waiting for its first command.
func startNode(ctx context.Context, dir string) (*jsBench, error) {
	// node runs in dir, so a relative script path would be taken twice.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--js: %w", err)
	}
	script := filepath.Join(dir, "bench.mjs")
	j := &jsBench{cmd: exec.CommandContext(ctx, "node", script)}
	j.cmd.Dir = dir
	j.cmd.Stderr = &j.stderr
	if j.stdin, err = j.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := j.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	j.lines = bufio.NewScanner(stdout)
	j.lines.Buffer(make([]byte, 0, 1<<20), 256<<20) // a slice's latencies are one line
	if err := j.cmd.Start(); err != nil {
		return nil, fmt.Errorf("--js: start node %s: %w", script, err)
	}
	return j, nil
}

// nodeDSN is the pool's connection as a URL node-postgres reads (it does not
// read libpq's key=value form).
func nodeDSN(pool *pgxpool.Pool) string {
	cc := pool.Config().ConnConfig
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))), Path: "/" + cc.Database}
	if cc.Password != "" {
		u.User = url.UserPassword(cc.User, cc.Password)
	} else {
		u.User = url.User(cc.User)
	}
	if cc.TLSConfig == nil {
		u.RawQuery = "sslmode=disable"
	}
	return u.String()
}

// call sends one request and decodes its reply.
func (j *jsBench) call(req any, reply any) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := j.stdin.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("--js: node: %w (stderr: %s)", err, j.stderr.String())
	}
	if !j.lines.Scan() {
		if err := j.lines.Err(); err != nil {
			return fmt.Errorf("--js: reading node's reply: %w (stderr: %s)", err, j.stderr.String())
		}
		return fmt.Errorf("--js: node exited before replying (stderr: %s)", j.stderr.String())
	}
	var e struct {
		Error string `json:"error"`
	}
	line := j.lines.Bytes()
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("--js: node replied %q: %w", line, err)
	}
	if e.Error != "" {
		return fmt.Errorf("--js: node: %s", e.Error)
	}
	return json.Unmarshal(line, reply)
}

// run measures one slice of op in node. Its CPU time is node's.
func (j *jsBench) run(_ context.Context, op string, conc int, d time.Duration) (sample, error) {
	var r struct {
		LatUS     []float64 `json:"lat_us"`
		ElapsedUS float64   `json:"elapsed_us"`
		CPUUS     float64   `json:"cpu_us"`
		Cmds      int64     `json:"cmds"` // where node counts them
	}
	if err := j.call(map[string]any{"cmd": "run", "op": op, "conc": conc, "ms": d.Milliseconds()}, &r); err != nil {
		return sample{}, err
	}
	if len(r.LatUS) == 0 {
		return sample{}, errors.New("--js: no operation completed")
	}
	s := sample{lat: make([]time.Duration, len(r.LatUS)), elapsed: usDuration(r.ElapsedUS), cpu: usDuration(r.CPUUS), cmds: r.Cmds}
	for i, l := range r.LatUS {
		s.lat[i] = usDuration(l)
	}
	return s, nil
}

func usDuration(us float64) time.Duration { return time.Duration(us * float64(time.Microsecond)) }

// Close ends the node process.
func (j *jsBench) Close() error {
	_ = j.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- j.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		_ = j.cmd.Process.Kill()
		return <-done
	}
}

// clusterSettings are the server settings that decide what a write costs,
// printed with every bench so that figures from clusters with different
// durability are never set side by side unknowingly.
func clusterSettings(ctx context.Context, pool *pgxpool.Pool) ([][2]string, error) {
	names := []string{"server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_sync_method",
		"wal_level", "shared_buffers", "max_wal_size", "checkpoint_timeout"}
	out := make([][2]string, 0, len(names))
	for _, n := range names {
		var v string
		if err := pool.QueryRow(ctx, "SELECT current_setting($1)", n).Scan(&v); err != nil {
			return nil, fmt.Errorf("read setting %s: %w", n, err)
		}
		out = append(out, [2]string{n, v})
	}
	// On a Citus coordinator the savers and stores distribute the bench's
	// tables (pgsaver, pgstore Setup): say so, with the worker and shard
	// counts, since every figure then includes distribution.
	var citus *string
	if err := pool.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'citus'").Scan(&citus); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("look for citus: %w", err)
	}
	if citus != nil {
		var workers int
		var shards string
		if err := pool.QueryRow(ctx, "SELECT count(*), current_setting('citus.shard_count') FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0").Scan(&workers, &shards); err != nil {
			return nil, fmt.Errorf("read the citus cluster: %w", err)
		}
		out = append(out, [2]string{"citus", *citus}, [2]string{"citus_workers", fmt.Sprint(workers)}, [2]string{"citus.shard_count", shards})
	}
	return out, nil
}
