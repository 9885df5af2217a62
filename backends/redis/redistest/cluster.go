package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a running Redis Cluster of three masters on loopback, no
// replicas.
type Cluster struct {
	// Addrs are the masters' host:port.
	Addrs   []string
	servers []*Server
}

// freeClusterPort is a loopback port p free with its cluster bus port
// p+10000.
func freeClusterPort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if p+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		_ = bus.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no free port pair")
}

// StartCluster starts three redis-server of version v in cluster mode
// and joins them with redis-cli --cluster create (every slot assigned, no
// replicas); they are stopped when t ends. It skips or fails t as Require
// does when the version is not installed.
func StartCluster(t testing.TB, v int) *Cluster {
	t.Helper()
	bin := Require(t, v)
	cli := filepath.Join(filepath.Dir(bin), "redis-cli")
	c := &Cluster{}
	for range 3 {
		var s *Server
		var err error
		for range 5 { // a port taken between the probe and the bind
			var port int
			if port, err = freeClusterPort(); err != nil {
				break
			}
			s, err = startOn(Options{Version: v, Args: []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", "5000"}}, strconv.Itoa(port))
			if err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		c.servers = append(c.servers, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	// Every node must see the cluster ok before clients use it.
	ctx := context.Background()
	for _, addr := range c.Addrs {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		for i := 0; ; i++ {
			info, err := rdb.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if i == 600 {
				_ = rdb.Close()
				t.Fatalf("cluster node %s not ok after 60s: %v %s", addr, err, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		_ = rdb.Close()
	}
	return c
}

// Client returns a cluster client, closed when t ends.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}
