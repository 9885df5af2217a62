package bench

import (
	"testing"

	"github.com/memvault/memvault/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
