package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redistest"
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

// selfSigned writes a certificate and key for 127.0.0.1 and returns their
// files and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memvault inspect test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// startInspect runs `memvault inspect args…` on db and returns the URL line
// it printed (without the newline) and a function that interrupts it and
// returns its exit error.
func startInspect(t *testing.T, env []string, args ...string) (string, func() error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"inspect"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
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
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL line: %v (stderr %s)", err, stderr.String())
	}
	stop := func() error {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			return err
		}
		err := cmd.Wait()
		exited = true
		if err != nil {
			return fmt.Errorf("%w (stderr %s)", err, stderr.String())
		}
		return nil
	}
	return line, stop
}

// TestInspectTLS: with --tls-cert/--tls-key it serves HTTPS, prints an
// https URL, and the session cookie is Secure.
func TestInspectTLS(t *testing.T) {
	env := sqliteEnv(t)
	cli(t, env, "", "migrate").must(t, 0)
	certFile, keyFile, pool := selfSigned(t)
	line, stop := startInspect(t, env, "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	if !regexp.MustCompile(`^https://127\.0\.0\.1:[0-9]+/\?token=[A-Za-z0-9_-]{43}\n$`).MatchString(line) {
		t.Fatalf("URL line %q", line)
	}
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(strings.TrimSuffix(line, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cs := resp.Cookies(); resp.StatusCode != http.StatusSeeOther || len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("login over TLS: %d, cookies %+v", resp.StatusCode, resp.Cookies())
	}
	if err := stop(); err != nil {
		t.Errorf("after an interrupt: %v", err)
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
	line, stop := startInspect(t, []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + strings.Fields(newKey)[0]})
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
	// Read-only without --allow-write: a deletion is refused.
	resp, err := c.PostForm(base+"/action/delete-thread", url.Values{"thread": {"support-7f3a"}, "confirm": {"support-7f3a"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a deletion without --allow-write: %d, want 403", resp.StatusCode)
	}
	if code, _ := body(&http.Client{Timeout: time.Minute}, strings.TrimSuffix(line, "\n")); code != http.StatusUnauthorized {
		t.Errorf("the token a second time: %d, want 401", code)
	}
	if err := stop(); err != nil {
		t.Errorf("after an interrupt: %v", err)
	}
}

// TestInspectServerBounded: the inspector's server bounds every phase of a
// request and the size of its headers (it bounded only the headers' time:
// a client trickling a body or never reading held a connection forever).
func TestInspectServerBounded(t *testing.T) {
	srv := inspectServer(t.Context(), http.NotFoundHandler())
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout,
		"WriteTimeout": srv.WriteTimeout, "IdleTimeout": srv.IdleTimeout} {
		if d <= 0 {
			t.Errorf("%s is %v: unbounded", name, d)
		}
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 1<<20 {
		t.Errorf("MaxHeaderBytes %d, want set and at most 1 MiB", srv.MaxHeaderBytes)
	}
}

// TestInspectAllowWrite: with --allow-write a thread is deleted through
// its confirmation page (the form's CSRF token, the id typed again), and
// the audit page shows the configured retention.
func TestInspectAllowWrite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	demo := cli(t, []string{"LANGGRAPH_AES_KEY=" + testKey}, "", "demo", "--db", db).must(t, 0)
	_, newKey, _ := strings.Cut(demo.stdout, "export LANGGRAPH_AES_KEY=")
	env := []string{"MEMVAULT_DB=" + db, "LANGGRAPH_AES_KEY=" + strings.Fields(newKey)[0],
		"MEMVAULT_RETENTION_KEEP_LATEST=50", "MEMVAULT_RETENTION_SWEEP_INTERVAL=off"}
	line, stop := startInspect(t, env, "--allow-write")
	base, _, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "/?token=")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: time.Minute}
	get := func(u string) (int, string) {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(strings.TrimSuffix(line, "\n")); code != http.StatusOK {
		t.Fatalf("login: %d", code)
	}
	if _, page := get(base + "/audit"); !strings.Contains(page, "only the newest 50 checkpoints") || !strings.Contains(page, "no background sweep") {
		t.Errorf("the audit page does not show the retention settings:\n%s", page)
	}
	_, page := get(base + "/confirm/delete-thread?thread=support-7f3a")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no confirmation form:\n%s", page)
	}
	req, _ := http.NewRequest("POST", base+"/action/delete-thread", strings.NewReader(url.Values{"thread": {"support-7f3a"}, "confirm": {"support-7f3a"}, "csrf": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("confirmed deletion: %d", resp.StatusCode)
	}
	if code, _ := get(base + "/thread?id=support-7f3a"); code != http.StatusNotFound {
		t.Errorf("the deleted thread: %d, want 404", code)
	}
	if err := stop(); err != nil {
		t.Errorf("after an interrupt: %v", err)
	}
}

// TestInspectMongoDBAndRedis: `memvault inspect` serves a MongoDB and a
// Redis database as it serves SQLite: a thread's decrypted values, the
// memories; the key census, which these backends do not have, is a page
// that says so (not a server error).
func TestInspectMongoDBAndRedis(t *testing.T) {
	redisSrv := redistest.StartT(t, redistest.Options{Version: 8})
	for name, dsn := range map[string]string{
		"mongodb": startMongo(t),
		"redis":   "redis://" + redisSrv.Addr + "/0",
	} {
		t.Run(name, func(t *testing.T) {
			env := []string{"MEMVAULT_DSN=" + dsn, "MEMVAULT_SCHEMA=" + randomName("insp"), "LANGGRAPH_AES_KEY=" + testKey}
			cli(t, env, "", "threads", "import", "testdata/thread.jsonl").must(t, 0)
			cli(t, env, "", "store", "put", "users", "alice", "diet", `{"text":"vegetarian, allergic to nuts"}`).must(t, 0)
			line, stop := startInspect(t, env)
			m := regexp.MustCompile(`^(http://127\.0\.0\.1:[0-9]+)/\?token=`).FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("URL line %q", line)
			}
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, Timeout: time.Minute}
			get := func(u string) (int, string) {
				resp, err := c.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if code, _ := get(strings.TrimSuffix(line, "\n")); code != http.StatusOK {
				t.Fatalf("login: %d", code)
			}
			for _, p := range []struct{ path, want string }{
				{"/threads", "golden-thread"},
				{"/thread?id=golden-thread&cp=1f0c6a2e-2222-6000-8000-000000000002&cpns=", "approve?"},
				{"/memories?ns=users&ns=alice", "vegetarian, allergic to nuts"},
			} {
				if code, page := get(m[1] + p.path); code != http.StatusOK || !strings.Contains(page, p.want) {
					t.Errorf("%s: %d, want 200 showing %q\n%.6000s", p.path, code, p.want, page)
				}
			}
			if code, page := get(m[1] + "/keys"); code == http.StatusInternalServerError || !strings.Contains(page, "not supported by this backend") {
				t.Errorf("/keys: %d, want a page saying the census is not supported\n%.2000s", code, page)
			}
			if err := stop(); err != nil {
				t.Errorf("after an interrupt: %v", err)
			}
		})
	}
}
