//go:build unix

package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// startStandby clones primary with pg_basebackup into a new cluster
// directory (its own watchdog and owner file, like a primary's) and starts
// it as a hot standby.
func startStandby(ctx context.Context, primary *cluster) (*cluster, error) {
	// PATH may hold a link to pg_ctl alone: take the directory of the
	// binary it points to, which holds pg_basebackup too.
	bin := primary.bin
	if real, err := filepath.EvalSymlinks(filepath.Join(bin, "pg_ctl")); err == nil {
		bin = filepath.Dir(real)
	}
	c := &cluster{bin: bin, cred: primary.cred}
	var err error
	if c.dir, err = os.MkdirTemp(filepath.Dir(primary.dir), dirPrefix); err != nil {
		return nil, fmt.Errorf("pgtest: create standby directory: %w", err)
	}
	c.data = filepath.Join(c.dir, "data")
	fail := func(err error) (*cluster, error) {
		if serr := c.stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		return nil, err
	}
	if err := c.own(); err != nil {
		return fail(err)
	}
	// -R writes standby.signal and primary_conninfo; the primary's
	// initdb -A trust allows local replication connections.
	src := fmt.Sprintf("host=%s port=%d user=postgres", primary.dir, primary.port)
	out, err := c.command(ctx, "pg_basebackup", "-D", c.data, "-R", "-X", "stream", "--no-sync",
		"-c", "fast", "-d", src).CombinedOutput()
	if err != nil {
		return fail(fmt.Errorf("pgtest: pg_basebackup: %w\n%s", err, out))
	}
	conf := fmt.Sprintf("\n# pgtest standby\nunix_socket_directories = '%s'\nhot_standby = on\n",
		strings.ReplaceAll(c.dir, "'", "''"))
	f, err := os.OpenFile(filepath.Join(c.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fail(fmt.Errorf("pgtest: configure standby: %w", err))
	}
	// The standby listens on a port of its own.
	if err := c.start(ctx); err != nil {
		return fail(err)
	}
	return c, nil
}
