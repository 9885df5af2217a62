package redissaver_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// The suite runs on every server version, plaintext, encrypted and with
// per-subject keys, each saver under a key prefix of its own on the
// version's shared server.
func TestConformance(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			t.Run("plaintext", func(t *testing.T) {
				t.Parallel()
				checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
					return newSaver(t, v, redissaver.Options{})
				})
			})
			t.Run("encrypted", func(t *testing.T) {
				t.Parallel()
				checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
					return newSaver(t, v, redissaver.Options{Serde: testkeys.Encrypting(t)})
				})
			})
			t.Run("subjects", func(t *testing.T) {
				t.Parallel()
				checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
					return newSaver(t, v, redissaver.Options{Serde: testkeys.Subjects(t)})
				})
			})
		})
	}
}
