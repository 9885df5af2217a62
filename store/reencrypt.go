package store

import (
	"context"

	"github.com/memvault/memvault/reencrypt"
)

// Reencrypter is implemented by stores that can rewrite every item value
// under the serializer's primary key (the last step of a key rotation).
// Rows already under the primary key are left alone, so an interrupted run
// can be started again.
type Reencrypter interface {
	Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error)
}
