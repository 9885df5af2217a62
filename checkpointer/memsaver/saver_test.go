package memsaver_test

import (
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// mustNew returns memsaver.New(opt) or fails the test.
func mustNew(t testing.TB, opt memsaver.Options) *memsaver.InMemorySaver {
	t.Helper()
	s, err := memsaver.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOptions runs the options check every saver's constructor shares.
func TestOptions(t *testing.T) {
	checkpointertest.RunOptions(t, func(t *testing.T, style checkpointer.VersionStyle, p checkpointer.RetentionPolicy) (checkpointer.Saver, error) {
		return memsaver.New(memsaver.Options{VersionStyle: style, Retention: p})
	})
}

func TestConformance(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return mustNew(t, memsaver.Options{})
	})
}

func TestConformanceIntVersions(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return mustNew(t, memsaver.Options{VersionStyle: checkpointer.VersionInt})
	})
}

func TestConformanceMsgPack(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return mustNew(t, memsaver.Options{Serde: serde.MsgPack{}})
	})
}

// newEncrypted returns serde.Encrypted over a fixed test key.
func newEncrypted(t testing.TB, opts ...serde.EncryptedOption) *serde.Encrypted {
	t.Helper()
	key, err := crypto.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := serde.NewEncrypted(nil, ring, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestConformanceEncrypted runs the suite with memvault's envelope, whose
// ciphertexts are bound to their location (internal/binding):
// CopyThread must re-bind values to the destination thread.
func TestConformanceEncrypted(t *testing.T) {
	enc := newEncrypted(t)
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return mustNew(t, memsaver.Options{Serde: enc})
	})
}

// TestConformanceSubjects runs the suite with per-subject keys: each
// thread's values sealed under the data key of the subject its id names.
func TestConformanceSubjects(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return mustNew(t, memsaver.Options{Serde: testkeys.Subjects(t)})
	})
}

func TestConformanceLangGraphAES(t *testing.T) {
	enc := newEncrypted(t, serde.WithDangerousLangGraphAES(crypto.ModeGCM))
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return mustNew(t, memsaver.Options{Serde: enc})
	})
}

func TestReencryptSuite(t *testing.T) {
	var base *memsaver.InMemorySaver
	checkpointertest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		if base == nil {
			base = mustNew(t, memsaver.Options{Serde: s})
			return base
		}
		return base.WithSerde(s)
	})
}

func TestBackgroundSweep(t *testing.T) {
	checkpointertest.RunBackgroundSweep(t, func(t *testing.T, p checkpointer.RetentionPolicy, every time.Duration, on func(checkpointer.SweepReport, error)) (checkpointer.Saver, func() error) {
		s := mustNew(t, memsaver.Options{Retention: p, SweepInterval: every, OnSweep: on})
		return s, s.Close
	})
}

func TestErasureSuite(t *testing.T) {
	var base *memsaver.InMemorySaver
	checkpointertest.RunErasure(t, nil, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		if base == nil {
			base = mustNew(t, memsaver.Options{Serde: s})
			return base
		}
		return base.WithSerde(s)
	})
}
