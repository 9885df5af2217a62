//go:build !unix

package pgtest

import (
	"context"
	"errors"
)

// cluster is a throwaway PostgreSQL cluster; only Unix systems start them.
type cluster struct {
	bin  string
	dsn  string
	port int
}

// startCluster fails: throwaway clusters need a Unix system.
func startCluster(context.Context) (*cluster, error) {
	return nil, errors.New("pgtest: throwaway clusters need a Unix system; set " + EnvDatabaseURL)
}

// startClusterConf fails: throwaway clusters need a Unix system.
func startClusterConf(ctx context.Context, _ string) (*cluster, error) { return startCluster(ctx) }

// stop does nothing.
func (*cluster) stop() error { return nil }

// startStandby fails: throwaway clusters need a Unix system.
func startStandby(context.Context, *cluster) (*cluster, error) {
	return nil, errors.New("pgtest: standbys need a Unix system")
}

// findBinDir fails: throwaway clusters need a Unix system.
func findBinDir() (string, error) {
	return "", errors.New("pgtest: throwaway clusters need a Unix system")
}
