package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReviewS29HostileIDsOnTheCommandLine (session 29 review): the export,
// forget and audit commands given hostile ids — invalid UTF-8, control
// characters, a 64 KiB id — on an audited database with per-subject keys.
// Each must exit with an error (2: bad input) or succeed, never panic,
// print what it was given only escaped (no raw control byte or invalid
// UTF-8 in the output, no line forged), and leave a trail that verifies.
// Held. (A 64 KiB id that names no thread was echoed whole in the error of
// threads export/delete; it no longer is: TestLongThreadIDNotEchoed.)
func TestReviewS29HostileIDsOnTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANGGRAPH_AES_KEY=" + testKey,
		"MEMVAULT_DB=" + filepath.Join(dir, "h.db"), "MEMVAULT_AUDIT=true",
		"MEMVAULT_SUBJECT_THREAD_SEPARATOR=:", "MEMVAULT_SUBJECT_NAMESPACE=users"}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(binary, args...)
		cmd.Dir = dir
		cmd.Env = env
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return so.String(), se.String(), code
	}
	if _, se, code := run("migrate"); code != 0 {
		t.Fatalf("migrate: %d %s", code, se)
	}
	huge := strings.Repeat("h", 64<<10)
	for _, id := range []string{"\xff\xfe", "carol:\x1b[2J\x1b[31mforged", "carol:1\nseq\tforged", "\u202ecarol", huge, "carol:" + huge} {
		for _, args := range [][]string{
			{"threads", "export", id},
			{"threads", "delete", id},
			{"audit", "show", "--subject", id},
			{"forget", id},
			{"keys", "readmit", id},
			{"keys", "rotate-subject", id},
		} {
			so, se, code := run(args...)
			name := strings.Join(args[:len(args)-1], " ")
			if len(id) > 40 {
				name += " <" + string(rune('0'+len(id)/(16<<10))) + "×16KiB>"
			}
			if strings.Contains(se, "panic") || strings.Contains(se, "goroutine ") {
				t.Errorf("%s %q: panics: %.300s", name, id[:min(len(id), 40)], se)
			}
			for what, out := range map[string]string{"stdout": so, "stderr": se} {
				if !utf8.ValidString(out) || strings.ContainsAny(out, "\x1b\u202e\t") {
					t.Errorf("%s %.40q: %s holds a raw control or invalid byte: %.200q", name, id, what, out)
				}
			}
			if code != 0 && code != 1 && code != 2 && code != 3 {
				t.Errorf("%s %.40q: exit %d", name, id, code)
			}
		}
	}
	// The trail still verifies.
	if _, se, code := run("audit", "verify"); code != 0 {
		t.Errorf("audit verify after the hostile commands: exit %d: %s", code, se)
	}
}
