package vault

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// appDSN returns dsn (a URL or a key/value string) with its
// application_name set to a name no other session has, and the name: the
// sessions of a Handle opened on it, its erasure lock's session included
// (a copy of the pool's connection configuration), are the server's
// sessions of that application_name.
func appDSN(t *testing.T, dsn string) (string, string) {
	t.Helper()
	app := "mv_" + strings.ToLower(rand.Text()[:16])
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("application_name", app)
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		return u.String(), app
	}
	return dsn + " application_name=" + app, app
}

// advisoryWaitSQL counts the sessions of application_name $2 that wait
// (not granted) for the advisory lock of the bigint key
// hashtextextended($1, 0) in this database (classid the key's high 32
// bits, objid the low, objsubid 1), for a lock that the session $3 holds
// when $3 is not 0: nothing of another test, another database, another
// test binary's sessions on a shared server.
const advisoryWaitSQL = `SELECT count(*) FROM pg_locks w
WHERE w.locktype = 'advisory' AND NOT w.granted AND w.objsubid = 1
	AND w.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND ((w.classid::bigint << 32) | w.objid::bigint) = hashtextextended($1, 0)
	AND w.pid IN (SELECT pid FROM pg_stat_activity WHERE application_name = $2)
	AND ($3::int = 0 OR EXISTS (SELECT 1 FROM pg_locks h WHERE h.pid = $3 AND h.granted AND h.locktype = 'advisory'
		AND (h.database, h.classid, h.objid, h.objsubid) = (w.database, w.classid, w.objid, w.objsubid)))`

// awaitAdvisoryWait returns true once a session of application_name app
// waits in pool's database for the advisory lock hashtextextended(key, 0)
// (held by the session holder, when not 0), and false when done yields
// first (the operation that was to wait ended without waiting; its value
// is put back). It polls pg_locks, the server's own record of the wait:
// the wait it returns on is that one and no other.
func awaitAdvisoryWait(t *testing.T, ctx context.Context, pool *pgxpool.Pool, key, app string, holder int32, done chan error) bool {
	t.Helper()
	return pollUntil(t, done, fmt.Sprintf("no session of %s waits for the advisory lock %q", app, key), func() bool {
		var n int
		if err := pool.QueryRow(ctx, advisoryWaitSQL, key, app, holder).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
}

// pollUntil returns true once cond holds, polling every 5 ms, and false
// when done yields first (its value is put back); after a minute it fails
// the test with what.
func pollUntil(t *testing.T, done chan error, what string, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-done:
			done <- err
			return false
		default:
		}
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openDescriptors counts this process's open descriptors of the file at
// path (resolved), from /proc/self/fd; ok is false where there is no
// /proc (not Linux).
func openDescriptors(t *testing.T, path string) (n int, ok bool) {
	t.Helper()
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == want {
			n++
		}
	}
	return n, true
}

// awaitLockFileWait returns true once a second descriptor of the SQLite
// erasure lock file at path is open in this process beside the holder's:
// a Forget of this process inside the lock's wait (fileForgetLock.take
// opens the file before its first try and closes it only when it returns),
// which cannot end while the holder holds it. It returns false when done
// yields first (the Forget ended without waiting; its value is put back).
// Without /proc (not Linux) it cannot see the wait and skips the test.
func awaitLockFileWait(t *testing.T, path string, done chan error) bool {
	t.Helper()
	return pollUntil(t, done, fmt.Sprintf("no second descriptor of %s", path), func() bool {
		n, ok := openDescriptors(t, path)
		if !ok {
			t.Skip("no /proc/self/fd: the wait for the lock file cannot be seen")
		}
		return n >= 2
	})
}
