//go:build unix

package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// dirPrefix starts the name of every cluster directory, so that clusters
// left behind can be found and removed.
const dirPrefix = "memvault-pgtest-"

// ownerFile, in a cluster directory, holds the pid of the test binary that
// owns the cluster.
const ownerFile = "owner.pid"

// startAttempts is how many ports are tried before giving up: another
// process may take the free port between picking it and the server binding it.
const startAttempts = 5

// watchdogScript runs beside the cluster with the read end of a pipe as its
// standard input; the test binary holds the only write end. When the test
// binary exits, however it exits, the pipe reaches end of file and the script
// stops the server and removes the cluster directory.
// Arguments: $1 pg_ctl, $2 data directory, $3 cluster directory.
const watchdogScript = `cat >/dev/null
if [ -f "$2/postmaster.pid" ]; then "$1" -D "$2" -m immediate -w -t 60 stop >/dev/null 2>&1; fi
rm -rf "$3"
`

// cluster is a throwaway PostgreSQL cluster owned by this test binary.
type cluster struct {
	bin  string              // directory holding initdb, pg_ctl and postgres
	dir  string              // cluster directory: data, log, socket, owner file
	data string              // data directory
	dsn  string              // connection string, over TCP on 127.0.0.1
	port int                 // TCP port (and socket suffix) of the server
	cred *syscall.Credential // user the server runs as; nil: this process's
	conf string              // extra postgresql.conf lines (a Citus node's preload)

	watchdog *exec.Cmd
	release  *os.File // write end of the watchdog's pipe; closing it stops the cluster
}

// startCluster initialises and starts a cluster in a new temporary directory.
func startCluster(ctx context.Context) (*cluster, error) {
	return startClusterConf(ctx, "")
}

// startClusterConf is startCluster with extra postgresql.conf lines.
func startClusterConf(ctx context.Context, conf string) (*cluster, error) {
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, conf: conf}
	base := os.TempDir()
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: run it as the postgres user, in a
		// directory it can reach.
		if c.cred, err = postgresUser(); err != nil {
			return nil, err
		}
		base = "/tmp"
	}
	sweep(ctx, base, filepath.Join(bin, "pg_ctl"), c.cred)

	if c.dir, err = os.MkdirTemp(base, dirPrefix); err != nil {
		return nil, fmt.Errorf("pgtest: create cluster directory: %w", err)
	}
	c.data = filepath.Join(c.dir, "data")
	if err := c.init(ctx); err != nil {
		_ = c.stop()
		return nil, err
	}
	return c, nil
}

// init starts the watchdog, runs initdb and starts the server.
func (c *cluster) init(ctx context.Context) error {
	if err := c.own(); err != nil {
		return err
	}
	return c.initdb(ctx)
}

// own records this process as the owner of the cluster directory, hands the
// directory to the server's user and starts the watchdog.
func (c *cluster) own() error {
	if err := os.WriteFile(filepath.Join(c.dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return fmt.Errorf("pgtest: write owner file: %w", err)
	}
	if c.cred != nil {
		if err := os.Chmod(c.dir, 0o755); err != nil {
			return fmt.Errorf("pgtest: chmod cluster directory: %w", err)
		}
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: chown cluster directory: %w", err)
		}
	}
	return c.startWatchdog()
}

// initdb creates and configures the data directory, then starts the server.
func (c *cluster) initdb(ctx context.Context) error {
	out, err := c.command(ctx, "initdb", "-D", c.data, "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	conf := fmt.Sprintf(`
# pgtest: a throwaway cluster, loopback only, no durability.
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
max_connections = 200
%s`, strings.ReplaceAll(c.dir, "'", "''"), c.conf)
	f, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("pgtest: configure cluster: %w", err)
	}

	return c.start(ctx)
}

// start starts the server of c.data on a free port, logging into the
// cluster directory, and sets c.dsn and c.port.
func (c *cluster) start(ctx context.Context) error {
	logPath := filepath.Join(c.dir, "postgres.log")
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		out, err := c.command(ctx, "pg_ctl", "-D", c.data, "-l", logPath, "-w", "-t", "60",
			"-o", "-p "+strconv.Itoa(port), "start").CombinedOutput()
		if err == nil {
			c.port = port
			c.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			return nil
		}
		log, _ := os.ReadFile(logPath)
		if attempt < startAttempts && bytes.Contains(log, []byte("could not bind")) {
			continue
		}
		return fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, tail(log, 2000))
	}
}

// startWatchdog starts the process that stops the cluster when this one exits.
func (c *cluster) startWatchdog() error {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return fmt.Errorf("pgtest: watchdog pipe: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "pgtest-watchdog",
		filepath.Join(c.bin, "pg_ctl"), c.data, c.dir)
	cmd.Dir = c.dir
	cmd.Stdin = r
	// Its own process group, so that an interrupt meant for the tests does not
	// kill it before it has cleaned up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return fmt.Errorf("pgtest: start watchdog: %w", err)
	}
	c.watchdog, c.release = cmd, w
	return nil
}

// stop stops the server and removes the cluster directory.
func (c *cluster) stop() error {
	if c.watchdog != nil {
		c.release.Close()
		done := make(chan error, 1)
		go func() { done <- c.watchdog.Wait() }()
		select {
		case err := <-done:
			if err == nil {
				if _, serr := os.Stat(c.dir); errors.Is(serr, os.ErrNotExist) {
					return nil
				}
			}
		case <-time.After(2 * time.Minute):
		}
	}
	// No watchdog, or it failed: do its work here.
	var errs []error
	if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := c.command(ctx, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out))
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, fmt.Errorf("pgtest: remove cluster directory: %w", err))
	}
	return errors.Join(errs...)
}

// command returns a command running one of the cluster's binaries as the
// cluster's user, in the cluster directory.
func (c *cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// sweep stops and removes the clusters under base whose owner has exited.
// It is best effort: errors are ignored.
func sweep(ctx context.Context, base, pgctl string, cred *syscall.Credential) {
	dirs, _ := filepath.Glob(filepath.Join(base, dirPrefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being created
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		data := filepath.Join(dir, "data")
		if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
			cmd := exec.CommandContext(ctx, pgctl, "-D", data, "-m", "immediate", "-w", "-t", "30", "stop")
			cmd.Dir = dir
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			_ = cmd.Run()
		}
		_ = os.RemoveAll(dir)
	}
}

// alive reports whether a process with this pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// postgresUser returns the credentials of the postgres system user.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs a postgres system user to run the server as (%v); %s", err, installHint)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: postgres user has non-numeric ids %s:%s", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// binDir is a directory holding PostgreSQL server binaries.
type binDir struct {
	path    string
	version []int // from pg_ctl --version, e.g. [15 20]
	vector  bool  // pgvector is installed for this version
}

// binDirPatterns are where server binaries are looked for after PATH.
var binDirPatterns = []string{
	"/usr/lib/postgresql/*/bin",         // Debian, Ubuntu
	"/usr/pgsql-*/bin",                  // PGDG RPMs
	"/usr/local/pgsql/bin",              // source builds
	"/opt/homebrew/opt/postgresql*/bin", // Homebrew
	"/usr/local/opt/postgresql*/bin",
}

var versionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)(?:\.(\d+))?`)

// findBinDir returns the directory of the server binaries to use: PGTEST_BINDIR
// when set, otherwise the newest version with pgvector, otherwise the newest.
func findBinDir() (string, error) {
	if d := os.Getenv(EnvBinDir); d != "" {
		if !hasServer(d) {
			return "", fmt.Errorf("pgtest: %s=%s holds no initdb and pg_ctl; %s", EnvBinDir, d, installHint)
		}
		return d, nil
	}
	var paths []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		paths = append(paths, filepath.Dir(p))
	}
	for _, pattern := range binDirPatterns {
		m, _ := filepath.Glob(pattern)
		paths = append(paths, m...)
	}

	var dirs []binDir
	for _, p := range paths {
		if !hasServer(p) || slices.ContainsFunc(dirs, func(d binDir) bool { return d.path == p }) {
			continue
		}
		out, err := exec.Command(filepath.Join(p, "pg_ctl"), "--version").Output()
		if err != nil {
			continue
		}
		m := versionRE.FindSubmatch(out)
		if m == nil {
			continue
		}
		major, _ := strconv.Atoi(string(m[1]))
		minor, _ := strconv.Atoi(string(m[2]))
		dirs = append(dirs, binDir{path: p, version: []int{major, minor}, vector: hasVector(p, major)})
	}
	if len(dirs) == 0 {
		return "", errors.New("pgtest: no PostgreSQL server binaries (initdb, pg_ctl) in PATH or /usr/lib/postgresql/*/bin; " + installHint)
	}
	slices.SortStableFunc(dirs, func(a, b binDir) int {
		if a.vector != b.vector {
			if a.vector {
				return -1
			}
			return 1
		}
		return slices.Compare(b.version, a.version)
	})
	return dirs[0].path, nil
}

// hasServer reports whether dir holds initdb and pg_ctl.
func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// hasVector reports whether pgvector is installed for the server in bin.
func hasVector(bin string, major int) bool {
	var shares []string
	if out, err := exec.Command(filepath.Join(bin, "pg_config"), "--sharedir").Output(); err == nil {
		shares = append(shares, strings.TrimSpace(string(out)))
	}
	shares = append(shares,
		fmt.Sprintf("/usr/share/postgresql/%d", major), // Debian, Ubuntu
		filepath.Join(bin, "..", "share"),
		filepath.Join(bin, "..", "share", "postgresql"),
	)
	for _, s := range shares {
		if _, err := os.Stat(filepath.Join(s, "extension", "vector.control")); err == nil {
			return true
		}
	}
	return false
}

// tail returns the last n bytes of b, at most.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
