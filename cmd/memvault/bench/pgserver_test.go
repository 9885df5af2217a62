package bench

import (
	"os"
	"runtime"
	"testing"
)

// TestReadProcStatSelf: this process's own /proc entry reads back its
// parent; a command name holding spaces and parentheses is read whole.
func TestReadProcStatSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	st, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != os.Getppid() {
		t.Errorf("ppid %d, want %d", st.ppid, os.Getppid())
	}
	line := "42 (post) (gres x) S 7 42 42 0 -1 4194560 100 0 0 0 11 22 33 44 20 0 1 0 5 0 0"
	st, ok := parseProcStat([]byte(line))
	if !ok || st.comm != "post) (gres x" || st.ppid != 7 || st.utime != 11 || st.stime != 22 || st.cutime != 33 || st.cstime != 44 || st.start != 5 {
		t.Errorf("parsed %+v, %v", st, ok)
	}
}

// FuzzParseProcStat: any text is parsed or refused, never a panic, and
// what parses has no negative count.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1 (postgres) S 0 1 1 0 -1 4194560 100 0 0 0 11 22 33 44 20 0 1 0 5 0 0"))
	f.Add([]byte(")("))
	f.Add([]byte("1 (x) S 1 2 3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := parseProcStat(b)
		if ok && (st.ppid < 0 || st.utime < 0 || st.stime < 0 || st.cutime < 0 || st.cstime < 0 || st.start < 0) {
			t.Fatalf("negative count: %+v", st)
		}
	})
}
