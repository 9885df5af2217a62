package redisvault_test

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redisvault"
)

// TestClient: redis:// and rediss:// make a client of one server, the
// +cluster schemes a cluster client seeded with every address; a URL
// that does not parse is an error that does not print its password.
func TestClient(t *testing.T) {
	c, err := redisvault.Client("redis://:pw@127.0.0.1:6379/2")
	if err != nil {
		t.Fatal(err)
	}
	if o := c.(*redis.Client).Options(); o.DB != 2 || o.Password != "pw" {
		t.Errorf("options %+v", o)
	}
	_ = c.Close()
	cc, err := redisvault.Client("redis+cluster://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002")
	if err != nil {
		t.Fatal(err)
	}
	if addrs := cc.(*redis.ClusterClient).Options().Addrs; len(addrs) != 3 {
		t.Errorf("cluster seeds %v, want 3", addrs)
	}
	_ = cc.Close()
	_, err = redisvault.Client("redis://:secret@127.0.0.1:6379/notanumber")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad URL: %v (want an error without the password)", err)
	}
}
