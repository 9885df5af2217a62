package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewS24bDSNShapesSlipThrough (session 24 review, second pass):
// config.looksLikeDSN anchors the URL scheme at the value's first byte,
// so a connection string with what a careless operator's tooling leaves
// around it slips through: a leading space (`MEMVAULT_DB= postgres://…`
// in a .env file) or the quotes Docker's --env-file keeps literally
// (`MEMVAULT_DB="postgres://…"`). Each is then opened as a SQLite path and
// printed whole, password included, or created as a file; a keyword/value
// string with quotes likewise.
func TestReviewS24bDSNShapesSlipThrough(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"MEMVAULT_DB leading space", []string{"MEMVAULT_DB= postgres://app:s3cretpart@db.example:5432/app"}, []string{"migrate"}},
		{"MEMVAULT_DB quoted", []string{`MEMVAULT_DB="postgres://app:s3cretpart@db.example:5432/app"`}, []string{"migrate"}},
		{"MEMVAULT_KEY_TABLE quoted", []string{"MEMVAULT_DB=" + filepath.Join(t.TempDir(), "m.db"), "MEMVAULT_SUBJECT_THREAD_SEPARATOR=:",
			`MEMVAULT_KEY_TABLE='postgres://keys:s3cretpart@keys.example:5432/keys'`}, []string{"migrate"}},
		{"--db quoted keyword/value", nil, []string{"--db", `'host=db.example user=app password=s3cretpart dbname=app'`, "migrate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(binary, tc.args...)
			cmd.Dir = dir
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANGGRAPH_AES_KEY=" + testKey}, tc.env...)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			made, _ := filepath.Glob(filepath.Join(dir, "*"))
			if strings.Contains(se.String(), "s3cretpart") || err == nil || len(made) > 0 {
				t.Fatalf("a DSN set in %s by mistake: exit error %v, files made %q, stderr %q", tc.name, err, made, strings.TrimSpace(se.String()))
			}
		})
	}
}
