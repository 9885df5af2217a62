package sqlitestore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
)

// evictFile drops path's pages from the operating system's page cache
// (posix_fadvise DONTNEED; the file is clean, so the kernel drops them),
// making the next read of it come from the disk — unless the machine
// under a virtual machine keeps it in its own cache, which no guest can
// drop.
func evictFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	const fadvDontNeed = 4
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		return e
	}
	return nil
}

// warmFile reads path whole, so that its pages are in the page cache.
func warmFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Read(buf); err != nil {
			return nil
		}
	}
}

// ioCounters is the process's storage reads so far: bytes the block
// layer read for it (/proc/self/io read_bytes), read system calls
// (syscr), major page faults and the CPU time spent in the kernel (which
// copying pages in from storage adds to).
type ioCounters struct {
	readBytes, syscr, majflt int64
	sys                      time.Duration
}

func readIO() ioCounters {
	var c ioCounters
	if f, err := os.Open("/proc/self/io"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			name, v, _ := strings.Cut(sc.Text(), ": ")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch name {
			case "read_bytes":
				c.readBytes = n
			case "syscr":
				c.syscr = n
			}
		}
		f.Close()
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.majflt = ru.Majflt
		c.sys = time.Duration(ru.Stime.Nano())
	}
	return c
}

func (c ioCounters) sub(o ioCounters) ioCounters {
	return ioCounters{c.readBytes - o.readBytes, c.syscr - o.syscr, c.majflt - o.majflt, c.sys - o.sys}
}

// BenchmarkColdOpen1536 opens a store on the database of
// BenchmarkSearch1536 and runs one search (k=10), alternating a cold
// page cache (the file's pages dropped first, see evictFile) and a warm
// one (the file read whole first), and reports for each the medians of
// the open, the first search's wall and CPU time, and of the open and
// search together the kernel's CPU time, the bytes read from storage and
// the read calls (MEMVAULT_BENCH_MARK prints each open's, with the items
// the search refined and rescored). -benchtime=Nx: N rounds
// of one cold and one warm open each.
func BenchmarkColdOpen1536(b *testing.B) {
	items, dims := benchEnvInt("MEMVAULT_BENCH_ITEMS", 2000), benchEnvInt("MEMVAULT_BENCH_DIMS", 1536)
	path := benchDB(b, items, dims)
	g := newClustered(items, dims)
	ctx := context.Background()
	type run struct {
		open, first, cpu time.Duration
		io               ioCounters
	}
	runs := map[string][]run{}
	modes := []string{"cold", "warm"}
	for i := 0; b.Loop(); i++ {
		for _, mode := range modes {
			for _, p := range []string{path, path + "-wal"} {
				var err error
				if mode == "cold" {
					err = evictFile(p)
				} else {
					err = warmFile(p)
				}
				if err != nil && !os.IsNotExist(err) {
					b.Fatal(err)
				}
			}
			io0, t0 := readIO(), time.Now()
			s := openStore(b, path, Options{Index: g.index()})
			open := time.Since(t0)
			f0, r0 := s.cache.Stats.Refined.Load(), s.cache.Stats.Rescored.Load()
			cpu0, t1 := cpuTime(), time.Now()
			res, err := s.Search(ctx, store.Namespace{"bench"}, store.SearchOptions{Query: fmt.Sprint("q", 1+i%100), Limit: 10})
			r := run{open: open, first: time.Since(t1), cpu: cpuTime() - cpu0, io: readIO().sub(io0)}
			if err != nil || len(res) != 10 {
				b.Fatal(err, len(res))
			}
			refined, rescored := s.cache.Stats.Refined.Load()-f0, s.cache.Stats.Rescored.Load()-r0
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			if os.Getenv("MEMVAULT_BENCH_MARK") != "" {
				fmt.Fprintf(os.Stderr, "MARK %s open %.1f ms first %.1f ms cpu %.1f ms (sys %.1f) read %.1f MB syscr %d majflt %d refined %d rescored %d\n", mode,
					ms(r.open), ms(r.first), ms(r.cpu), ms(r.io.sys), float64(r.io.readBytes)/1e6, r.io.syscr, r.io.majflt, refined, rescored)
			}
			runs[mode] = append(runs[mode], r)
		}
	}
	med := func(rs []run, f func(run) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	for _, mode := range modes {
		rs := runs[mode]
		b.ReportMetric(med(rs, func(r run) float64 { return ms(r.open) }), mode+"-open-ms")
		b.ReportMetric(med(rs, func(r run) float64 { return ms(r.first) }), mode+"-first-ms")
		b.ReportMetric(med(rs, func(r run) float64 { return ms(r.cpu) }), mode+"-first-cpu-ms")
		b.ReportMetric(med(rs, func(r run) float64 { return ms(r.io.sys) }), mode+"-sys-ms")
		b.ReportMetric(med(rs, func(r run) float64 { return float64(r.io.readBytes) / 1e6 }), mode+"-read-MB")
		b.ReportMetric(med(rs, func(r run) float64 { return float64(r.io.syscr) }), mode+"-syscr")
	}
}
