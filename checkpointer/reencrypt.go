package checkpointer

import (
	"context"

	"github.com/memvault/memvault/reencrypt"
)

// Reencrypter is implemented by savers that can rewrite their stored values
// (channel blobs and pending writes) under the serializer's primary key:
// the last step of a key rotation. Rows already under the primary key are
// left alone, so an interrupted run can simply be started again. A run
// that resealed every row but could not compact the file wraps
// reencrypt.ErrCompactPending.
type Reencrypter interface {
	Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error)
}
