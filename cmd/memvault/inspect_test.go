package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInspectRefusesNetworkWithoutTLS: a non-loopback --listen without TLS
// is a usage error, before any database is opened; half a TLS pair too.
func TestInspectRefusesNetworkWithoutTLS(t *testing.T) {
	env := sqliteEnv(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		r := cli(t, env, "", "inspect", "--listen", addr).must(t, 2)
		if !strings.Contains(r.stderr, "--tls-cert and --tls-key") || r.stdout != "" {
			t.Errorf("--listen %s: stderr %q stdout %q", addr, r.stderr, r.stdout)
		}
	}
	r := cli(t, env, "", "inspect", "--tls-cert", "x.pem").must(t, 2)
	if !strings.Contains(r.stderr, "go together") {
		t.Errorf("half a TLS pair: %q", r.stderr)
	}
}

// TestInspectServesDemo: on the demo's database, inspect prints the URL
// with its token on a line of its own; the token logs in once, the thread
// page shows a decrypted value, a request without the cookie gets 401, and
// an interrupt stops the server with status 0.
func TestInspectServesDemo(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	demo := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "demo", "--db", db).must(t, 0)
	_, newKey, ok := strings.Cut(demo.stdout, "export LANGGRAPH_AES_KEY=")
	if !ok {
		t.Fatalf("the demo did not print its rotated key:\n%s", demo.stdout)
	}
	cmd := exec.Command(binary, "inspect")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + strings.Fields(newKey)[0]}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL line: %v (stderr %s)", err, stderr.String())
	}
	m := regexp.MustCompile(`^(http://127\.0\.0\.1:[0-9]+)/\?token=([A-Za-z0-9_-]{43})\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("URL line %q", line)
	}
	base := m[1]
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: time.Minute}
	body := func(c *http.Client, u string) (int, string) {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := body(c, strings.TrimSuffix(line, "\n")); code != http.StatusOK {
		t.Fatalf("login: %d", code)
	}
	code, page := body(c, base+"/thread?id=support-7f3a")
	if code != http.StatusOK || !strings.Contains(page, "charged twice for invoice INV-1042") || !strings.Contains(page, `id="timeline"`) {
		t.Errorf("thread page: %d\n%s", code, page)
	}
	if code, _ := body(&http.Client{Timeout: time.Minute}, base+"/threads"); code != http.StatusUnauthorized {
		t.Errorf("without the cookie: %d, want 401", code)
	}
	if code, _ := body(&http.Client{Timeout: time.Minute}, strings.TrimSuffix(line, "\n")); code != http.StatusUnauthorized {
		t.Errorf("the token a second time: %d, want 401", code)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Errorf("after an interrupt: %v (stderr %s)", err, stderr.String())
	}
}
