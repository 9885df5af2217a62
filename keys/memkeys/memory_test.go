package memkeys_test

import (
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
)

func TestConformance(t *testing.T) {
	keystest.Run(t, func(*testing.T) keys.Table { return memkeys.New() })
}
