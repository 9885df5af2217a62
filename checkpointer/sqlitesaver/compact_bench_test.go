package sqlitesaver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/carve"
	"github.com/memvault/memvault/reencrypt"
)

// BenchmarkReencryptCompaction measures what the compaction that ends a
// re-encryption costs on a realistic file: 10 000 checkpoints (100
// threads of 100 steps, each step a new version of a conversation's last
// 20 messages of about 200 bytes, and a pending write), sealed under K1
// and re-encrypted to K2. The setup reports the re-encryption itself
// (reencrypt-s, and its CPU time, which a shared machine inflates less)
// and the file's size (MB); each op is one Compact of it.
//
//	go test ./checkpointer/sqlitesaver -run '^$' -bench ReencryptCompaction -benchtime 3x
func BenchmarkReencryptCompaction(b *testing.B) {
	ctx := context.Background()
	toK1, toK2, _ := carve.Rotation(b)
	path := filepath.Join(b.TempDir(), "compact.db")
	s, err := Open(ctx, path, Options{Serde: toK1})
	if err != nil {
		b.Fatal(err)
	}
	const threads, steps, keep = 100, 100, 20
	for th := range threads {
		cfg := checkpointer.Config{ThreadID: fmt.Sprint("thread-", th)}
		var msgs []any
		version := ""
		for i := range steps {
			msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[i%2],
				"content": fmt.Sprintf("message %d of thread %d: %s", i, th, strings.Repeat("words ", 28))})
			if len(msgs) > keep {
				msgs = msgs[1:]
			}
			version = s.NextVersion(version)
			nv := map[string]string{"messages": version}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"messages": msgs}, ChannelVersions: nv}
			if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": i}, nv); err != nil {
				b.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: i}}, "task", ""); err != nil {
				b.Fatal(err)
			}
		}
	}
	s.Close()
	s, err = Open(ctx, path, Options{Serde: toK2})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start, startCPU := time.Now(), cpuTime()
	st, err := s.Reencrypt(ctx, reencrypt.Options{DeferCompaction: true})
	if err != nil || st.Rewritten != 2*threads*steps {
		b.Fatalf("reencrypt: %+v %v", st, err)
	}
	reencrypt, reencryptCPU := time.Since(start), cpuTime()-startCPU
	if err := s.d.db.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	startCPU = cpuTime()
	for b.Loop() {
		if err := s.d.db.Compact(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-startCPU).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(reencrypt.Seconds(), "reencrypt-s")
	b.ReportMetric(reencryptCPU.Seconds(), "reencrypt-cpu-s")
	b.ReportMetric(float64(fi.Size())/(1<<20), "MB")
}
