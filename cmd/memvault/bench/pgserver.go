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
	var started time.Time
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid(), pg_postmaster_start_time()").Scan(&backend, &started); err != nil {
		return nil, false
	}
	st, err := readProcStat(backend)
	if err != nil || st.comm != "postgres" {
		return nil, false
	}
	postmaster := st.ppid
	pm, err := readProcStat(postmaster)
	if err != nil || pm.comm != "postgres" {
		return nil, false
	}
	// A server elsewhere (a container, another machine) whose backend's
	// pid is a local postgres's: that postmaster started at another time.
	if boot, ok := bootTime(); !ok || (boot.Add(time.Duration(pm.start)*time.Second/clockTicks).Sub(started)).Abs() > 2*time.Second {
		return nil, false
	}
	probe := func(context.Context) (serverStats, error) {
		// A child that exits during the scan is in neither count: read
		// again until the postmaster's children's times did not move.
		for range 5 {
			before, err := readProcStat(postmaster)
			if err != nil {
				return serverStats{}, fmt.Errorf("postgres server CPU: %w", err)
			}
			ticks := before.utime + before.stime + before.cutime + before.cstime
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
			after, err := readProcStat(postmaster)
			if err != nil {
				return serverStats{}, fmt.Errorf("postgres server CPU: %w", err)
			}
			if after.cutime == before.cutime && after.cstime == before.cstime {
				return serverStats{cpu: time.Duration(ticks) * time.Second / clockTicks}, nil
			}
		}
		return serverStats{}, fmt.Errorf("postgres server CPU: its processes kept exiting while read")
	}
	return probe, true
}

// bootTime is when the machine booted (/proc/stat's btime).
func bootTime() (time.Time, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return time.Unix(n, 0), err == nil
		}
	}
	return time.Time{}, false
}

// procStat is what localPGProbe reads of /proc/<pid>/stat.
type procStat struct {
	comm                         string
	ppid                         int
	utime, stime, cutime, cstime int64
	start                        int64 // clock ticks after boot
}

// readProcStat reads /proc/pid/stat: the command name in parentheses
// (which may hold spaces and parentheses, so the fields are read after
// its last ')'), then state, ppid, … utime (14), stime, cutime, cstime,
// … starttime (22).
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
	if len(f) < 22-3+1 {
		return procStat{}, false
	}
	var n [6]int64
	for i, field := range []int{4, 14, 15, 16, 17, 22} {
		v, err := strconv.ParseInt(string(f[field-3]), 10, 64)
		if err != nil || v < 0 {
			return procStat{}, false
		}
		n[i] = v
	}
	return procStat{comm: string(b[open+1 : end]), ppid: int(n[0]), utime: n[1], stime: n[2], cutime: n[3], cstime: n[4], start: n[5]}, true
}
