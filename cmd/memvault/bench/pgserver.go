package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// clockTicks is the unit of /proc's CPU times (USER_HZ: 100 on every
// Linux architecture Go builds for).
const clockTicks = 100

// localPGProbe returns a serverProbe of the PostgreSQL server pool
// reaches when it runs on this machine (Linux): the CPU time of its
// postmaster and every process it started — backends, the WAL writer,
// the checkpointer — read from /proc, the exited ones' included
// (the postmaster's children times), so that a row shows what each
// operation costs the server whatever else loads the machine. ok is
// false elsewhere: a remote server, another PID namespace, no /proc.
// The bytes received are not counted (PostgreSQL does not report them).
func localPGProbe(ctx context.Context, pool *pgxpool.Pool) (serverProbe, bool) {
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return nil, false
	}
	st, err := readProcStat(backend)
	if err != nil || st.comm != "postgres" {
		return nil, false
	}
	postmaster := st.ppid
	if pm, err := readProcStat(postmaster); err != nil || pm.comm != "postgres" {
		return nil, false
	}
	probe := func(context.Context) (serverStats, error) {
		pm, err := readProcStat(postmaster)
		if err != nil {
			return serverStats{}, fmt.Errorf("postgres server CPU: %w", err)
		}
		ticks := pm.utime + pm.stime + pm.cutime + pm.cstime
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			pid, err := strconv.Atoi(filepath.Base(d))
			if err != nil || pid == postmaster {
				continue
			}
			if c, err := readProcStat(pid); err == nil && c.ppid == postmaster {
				ticks += c.utime + c.stime
			}
		}
		return serverStats{cpu: time.Duration(ticks) * time.Second / clockTicks}, nil
	}
	return probe, true
}

// procStat is what localPGProbe reads of /proc/<pid>/stat.
type procStat struct {
	comm                         string
	ppid                         int
	utime, stime, cutime, cstime int64
}

// readProcStat reads /proc/pid/stat: the command name in parentheses
// (which may hold spaces and parentheses, so the fields are read after
// its last ')'), then state, ppid, … utime (14), stime, cutime, cstime.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	st, ok := parseProcStat(b)
	if !ok {
		return procStat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return st, nil
}

// parseProcStat parses the text of a /proc/pid/stat file; false when it
// is not one.
func parseProcStat(b []byte) (procStat, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 17-3+1 {
		return procStat{}, false
	}
	var n [5]int64
	for i, field := range []int{4, 14, 15, 16, 17} {
		v, err := strconv.ParseInt(string(f[field-3]), 10, 64)
		if err != nil || v < 0 {
			return procStat{}, false
		}
		n[i] = v
	}
	return procStat{comm: string(b[open+1 : end]), ppid: int(n[0]), utime: n[1], stime: n[2], cutime: n[3], cstime: n[4]}, true
}
