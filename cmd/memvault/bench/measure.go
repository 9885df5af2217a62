package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Row is one line of results; its JSON form is the documented
// {"suite","op","mode","concurrency","ops_per_s","p50_ms","p99_ms"}, plus
// the client CPU time per operation.
type Row struct {
	// Suite is "checkpointer" or "store".
	Suite string `json:"suite"`
	// Op is the operation measured: put, get_tuple, search_k10, ...
	Op string `json:"op"`
	// Mode is what ran it: the baseline (raw-pgx, raw-sql, ...), a
	// library variant (plaintext, encrypted/hnsw, ...; "@N" for the data
	// set of N checkpoints in scale mode) or langgraph-js.
	Mode string `json:"mode"`
	// Concurrency is the number of operations in flight.
	Concurrency int `json:"concurrency"`
	// OpsPerS is the completed operations per second.
	OpsPerS float64 `json:"ops_per_s"`
	// P50ms and P99ms are the median and 99th percentile latencies in
	// milliseconds.
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
	// ClientCPUus is the bench process's CPU time (user + system) per
	// operation, in microseconds: the client-side cost of an operation,
	// steadier on a busy machine than throughput. The server's share is
	// not in it.
	ClientCPUus float64 `json:"client_cpu_us"`
	// CmdsPerOp is the commands sent to the server per operation, where
	// the client counts them (MongoDB: the driver's command monitor, and
	// the JS driver's); absent elsewhere.
	CmdsPerOp float64 `json:"cmds_per_op,omitempty"`
	// TripsPerOp is the round trips to the server per operation, where
	// the client counts them (Redis: a pipeline or MULTI/EXEC is one);
	// absent elsewhere.
	TripsPerOp float64 `json:"round_trips_per_op,omitempty"`
	// ServerCPUus is the server's CPU time (user + system) per operation,
	// in microseconds, where the server reports it (Redis: INFO cpu
	// before and after each slice, every slice running one mode only);
	// absent elsewhere. With ClientCPUus it is an operation's whole cost,
	// which the machine's load disturbs far less than throughput.
	ServerCPUus float64 `json:"server_cpu_us,omitempty"`
	// BytesInPerOp is the bytes the server received per operation (Redis:
	// INFO stats), where ServerCPUus is reported.
	BytesInPerOp float64 `json:"bytes_in_per_op,omitempty"`
}

// serverStats is a server's cumulative CPU time and bytes received.
type serverStats struct {
	cpu     time.Duration
	bytesIn int64
}

// serverProbeKey is the context key of the func a slice reads the
// server's statistics with before and after it runs (a serverProbe), on
// backends whose server reports them.
type serverProbeKey struct{}

// serverProbe reads a server's cumulative statistics.
type serverProbe func(ctx context.Context) (serverStats, error)

// cmdCounterKey is the context key of the counter a slice's commands are
// counted in (countCmd).
type cmdCounterKey struct{}

// countCmd counts one command sent by the operation of ctx, if its slice
// counts them.
func countCmd(ctx context.Context) {
	if c, ok := ctx.Value(cmdCounterKey{}).(*atomic.Int64); ok {
		c.Add(1)
	}
}

// benchOp runs one operation; i is a sequence number unique within a row.
type benchOp func(ctx context.Context, i int64) error

// sample is what one timed run of an operation produced.
type sample struct {
	lat     []time.Duration
	elapsed time.Duration
	cpu     time.Duration // process CPU time
	cmds    int64         // commands sent to the server, where counted
	server  serverStats   // the server's share, where probed
}

// measure runs op for d with conc workers.
func measure(ctx context.Context, conc int, d time.Duration, fn benchOp) (sample, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var cmds atomic.Int64
	ctx = context.WithValue(ctx, cmdCounterKey{}, &cmds)
	var seq atomic.Int64
	var mu sync.Mutex
	var s sample
	var firstErr error
	var wg sync.WaitGroup
	// The probe runs outside the client's CPU window; its own INFO is in
	// the server's share, a few µs per slice of thousands of operations.
	probe, _ := ctx.Value(serverProbeKey{}).(serverProbe)
	var srv0 serverStats
	if probe != nil {
		var err error
		if srv0, err = probe(ctx); err != nil {
			return s, err
		}
	}
	cpu0 := processCPU()
	deadline := time.Now().Add(d)
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			// Each worker runs one operation at least: on a loaded
			// machine a worker scheduled after the deadline ran none,
			// and a slice of such workers measured nothing.
			for first := true; (first || time.Now().Before(deadline)) && ctx.Err() == nil; first = false {
				i := seq.Add(1)
				t0 := time.Now()
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			s.lat = append(s.lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.elapsed = time.Since(start)
	s.cpu = processCPU() - cpu0
	s.cmds = cmds.Load()
	if probe != nil && firstErr == nil {
		srv1, err := probe(ctx)
		if err != nil {
			return s, err
		}
		s.server = serverStats{cpu: srv1.cpu - srv0.cpu, bytesIn: srv1.bytesIn - srv0.bytesIn}
	}
	if firstErr != nil {
		return s, firstErr
	}
	if len(s.lat) == 0 {
		return s, fmt.Errorf("no operation completed")
	}
	return s, nil
}

// compare measures one operation in several modes (the baseline among
// them) for d each, in slices of about a second run in the order A B C,
// then C B A, then A B C again, and so on (at least two rounds), so that
// drift and slow spells (a table growing, a checkpoint flushing, a
// neighbour's load, fsync latency that varies by the second) weigh on
// every mode alike. Each row merges its slices.
//
// A mode in external is measured by its own runner (a client outside this
// process) in the same slices.
func compare(ctx context.Context, suite, op string, modes []string, conc int, d time.Duration, fn func(mode string) benchOp, external map[string]sliceRunner) ([]Row, error) {
	rounds := max(2, int(d/time.Second)+int(d/time.Second)%2)
	merged := make(map[string]*sample, len(modes))
	run := func(mode string) error {
		var s sample
		var err error
		if ext := external[mode]; ext != nil {
			s, err = ext(ctx, op, conc, d/time.Duration(rounds))
		} else {
			s, err = measure(ctx, conc, d/time.Duration(rounds), fn(mode))
		}
		if err != nil {
			return fmt.Errorf("%s %s (%s, %d in flight): %w", suite, op, mode, conc, err)
		}
		m := merged[mode]
		if m == nil {
			m = &sample{}
			merged[mode] = m
		}
		m.lat = append(m.lat, s.lat...)
		m.elapsed += s.elapsed
		m.cpu += s.cpu
		m.cmds += s.cmds
		m.server.cpu += s.server.cpu
		m.server.bytesIn += s.server.bytesIn
		return nil
	}
	for r := range rounds {
		for i := range modes {
			if r%2 == 1 {
				i = len(modes) - 1 - i
			}
			if err := run(modes[i]); err != nil {
				return nil, err
			}
		}
	}
	rows := make([]Row, 0, len(modes))
	for _, mode := range modes {
		s := merged[mode]
		slices.Sort(s.lat)
		rows = append(rows, Row{
			Suite: suite, Op: op, Mode: mode, Concurrency: conc,
			OpsPerS:      float64(len(s.lat)) / s.elapsed.Seconds(),
			P50ms:        ms(s.lat[len(s.lat)*50/100]),
			P99ms:        ms(s.lat[min(len(s.lat)-1, len(s.lat)*99/100)]),
			ClientCPUus:  float64(s.cpu.Nanoseconds()) / 1000 / float64(len(s.lat)),
			CmdsPerOp:    float64(s.cmds) / float64(len(s.lat)),
			ServerCPUus:  float64(s.server.cpu.Nanoseconds()) / 1000 / float64(len(s.lat)),
			BytesInPerOp: float64(s.server.bytesIn) / float64(len(s.lat)),
		})
	}
	return rows, nil
}

// namedOp is one operation of a bench: its name and its function for
// each mode.
type namedOp struct {
	name string
	fn   func(mode string) benchOp
}

// compareOps runs compare on each of ops that bf asks for, at concurrency 1
// and bf.concurrency, and prints the rows.
func (p *benchPrinter) compareOps(ctx context.Context, suite string, ops []namedOp, modes []string, bf params, external map[string]sliceRunner) error {
	for _, op := range ops {
		if !bf.wants(op.name) {
			continue
		}
		for _, conc := range []int{1, bf.concurrency} {
			rows, err := compare(ctx, suite, op.name, modes, conc, bf.duration, op.fn, external)
			if err != nil {
				return err
			}
			for _, r := range rows {
				if err := p.print(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchPrinter prints rows as they come: a table for people, JSON lines for
// scripts.
type benchPrinter struct {
	out    io.Writer
	json   bool
	header bool
	rows   []Row
	// cmds: the table has a column of commands per operation (the
	// MongoDB bench counts them); trips: what was counted is round trips
	// (Redis), printed as TRIPS/OP and TripsPerOp.
	cmds  bool
	trips bool
	// server: the table has columns of the server's CPU time and bytes
	// received per operation, and the summary total CPU ratios.
	server bool
	// noBytesIn: the server's bytes received are not known (PostgreSQL,
	// whose CPU a local probe reads): no B IN/OP column.
	noBytesIn bool
}

func (p *benchPrinter) print(r Row) error {
	if p.trips {
		r.TripsPerOp, r.CmdsPerOp = r.CmdsPerOp, 0
	}
	p.rows = append(p.rows, r)
	if p.json {
		return json.NewEncoder(p.out).Encode(r)
	}
	if !p.header {
		p.header = true
		fmt.Fprintf(p.out, "%-13s %-16s %-16s %4s %12s %9s %9s %12s", "SUITE", "OP", "MODE", "CONC", "OPS/S", "P50 ms", "P99 ms", "CLIENT CPU µs")
		if p.cmds {
			label := "CMDS/OP"
			if p.trips {
				label = "TRIPS/OP"
			}
			fmt.Fprintf(p.out, " %8s", label)
		}
		if p.server {
			fmt.Fprintf(p.out, " %13s", "SERVER CPU µs")
			if !p.noBytesIn {
				fmt.Fprintf(p.out, " %8s", "B IN/OP")
			}
		}
		fmt.Fprintln(p.out)
	}
	_, err := fmt.Fprintf(p.out, "%-13s %-16s %-16s %4d %12.0f %9.3f %9.3f %12.1f", r.Suite, r.Op, r.Mode, r.Concurrency, r.OpsPerS, r.P50ms, r.P99ms, r.ClientCPUus)
	if err == nil && p.cmds {
		_, err = fmt.Fprintf(p.out, " %8.2f", r.CmdsPerOp+r.TripsPerOp)
	}
	if err == nil && p.server {
		_, err = fmt.Fprintf(p.out, " %13.1f", r.ServerCPUus)
		if err == nil && !p.noBytesIn {
			_, err = fmt.Fprintf(p.out, " %8.0f", r.BytesInPerOp)
		}
	}
	if err == nil {
		_, err = fmt.Fprintln(p.out)
	}
	return err
}

// settings prints the cluster's durability settings: in the header of the
// table, or as one {"cluster":{…}} object before the JSON rows.
func (p *benchPrinter) settings(s [][2]string) error {
	if p.json {
		m := make(map[string]string, len(s))
		for _, kv := range s {
			m[kv[0]] = kv[1]
		}
		return json.NewEncoder(p.out).Encode(map[string]any{"cluster": m})
	}
	parts := make([]string, len(s))
	for i, kv := range s {
		parts[i] = kv[0] + "=" + kv[1]
	}
	_, err := fmt.Fprintf(p.out, "cluster: %s\n\n", strings.Join(parts, " "))
	return err
}

// summary prints each library row's ratio to the baseline row of the same
// op and concurrency, and to JS LangGraph's when it ran.
func (p *benchPrinter) summary(baseline string) {
	if p.json {
		return
	}
	p.ratios(baseline, func(r Row) bool { return r.Mode != baseline })
	if p.server {
		p.cpuRatios(baseline)
	}
	if slices.ContainsFunc(p.rows, func(r Row) bool { return r.Mode == jsMode }) {
		// Every memvault mode: the checkpointer's "plaintext", the store's
		// "plaintext/hnsw" and the like.
		p.ratios(jsMode, func(r Row) bool {
			return strings.HasPrefix(r.Mode, "plaintext") || strings.HasPrefix(r.Mode, "encrypted")
		})
	}
	fmt.Fprintf(p.out, "\nencrypted relative to plaintext (same op, same concurrency):\n")
	for _, r := range p.rows {
		if !strings.Contains(r.Mode, "encrypted") {
			continue
		}
		plain := strings.Replace(r.Mode, "encrypted", "plaintext", 1)
		i := slices.IndexFunc(p.rows, func(b Row) bool {
			return b.Mode == plain && b.Op == r.Op && b.Concurrency == r.Concurrency
		})
		if i < 0 {
			continue
		}
		fmt.Fprintf(p.out, "  %-16s %-16s c=%-3d throughput %+6.1f%%, client CPU %+6.1f µs/op\n", r.Op, r.Mode, r.Concurrency,
			100*(r.OpsPerS/p.rows[i].OpsPerS-1), r.ClientCPUus-p.rows[i].ClientCPUus)
	}
}

// ratios prints the throughput of the rows keep selects relative to the
// row of mode base with the same op and concurrency.
func (p *benchPrinter) ratios(base string, keep func(Row) bool) {
	fmt.Fprintf(p.out, "\nthroughput relative to %s (same op, same concurrency):\n", base)
	for _, r := range p.rows {
		if !keep(r) {
			continue
		}
		i := slices.IndexFunc(p.rows, func(b Row) bool {
			return b.Mode == base && b.Op == r.Op && b.Concurrency == r.Concurrency
		})
		if i < 0 {
			continue
		}
		fmt.Fprintf(p.out, "  %-16s %-16s c=%-3d %5.2fx\n", r.Op, r.Mode, r.Concurrency, r.OpsPerS/p.rows[i].OpsPerS)
	}
}

// cpuRatios prints each library row's CPU time per operation, client and
// server together, relative to the baseline row of the same op and
// concurrency.
func (p *benchPrinter) cpuRatios(base string) {
	fmt.Fprintf(p.out, "\ntotal CPU per operation (client + server) relative to %s:\n", base)
	for _, r := range p.rows {
		if r.Mode == base {
			continue
		}
		i := slices.IndexFunc(p.rows, func(b Row) bool {
			return b.Mode == base && b.Op == r.Op && b.Concurrency == r.Concurrency
		})
		if i < 0 {
			continue
		}
		b := p.rows[i]
		fmt.Fprintf(p.out, "  %-16s %-16s c=%-3d %5.2fx  (%.1f + %.1f µs vs %.1f + %.1f µs)\n", r.Op, r.Mode, r.Concurrency,
			(r.ClientCPUus+r.ServerCPUus)/(b.ClientCPUus+b.ServerCPUus), r.ClientCPUus, r.ServerCPUus, b.ClientCPUus, b.ServerCPUus)
	}
}

// wants reports whether op is to be run.
func (bf params) wants(op string) bool {
	return len(bf.ops) == 0 || slices.Contains(bf.ops, op)
}

// checkOps fails on an --ops name that is not one of known.
func (bf params) checkOps(known ...string) error {
	for _, op := range bf.ops {
		if !slices.Contains(known, op) {
			return optionf("unknown operation %q (known: %s)", op, strings.Join(known, ", "))
		}
	}
	return nil
}
