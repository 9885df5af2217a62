package mongoindex

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestSameKey: an index listed by the server (int32 directions) matches
// the key Setup asks for (int), field by field and in order only.
func TestSameKey(t *testing.T) {
	want := bson.D{{Key: "thread_id", Value: 1}, {Key: "checkpoint_id", Value: -1}}
	for _, c := range []struct {
		have bson.D
		same bool
	}{
		{bson.D{{Key: "thread_id", Value: int32(1)}, {Key: "checkpoint_id", Value: int32(-1)}}, true},
		{bson.D{{Key: "thread_id", Value: int32(1)}, {Key: "checkpoint_id", Value: int32(1)}}, false},
		{bson.D{{Key: "checkpoint_id", Value: -1}, {Key: "thread_id", Value: 1}}, false},
		{bson.D{{Key: "thread_id", Value: 1}}, false},
	} {
		if got := sameKey(c.have, want); got != c.same {
			t.Errorf("sameKey(%v) = %v, want %v", c.have, got, c.same)
		}
	}
}
