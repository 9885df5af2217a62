package core

import (
	"github.com/memvault/memvault/checkpointer"
)

// specialIndex is LangGraph's WRITES_IDX_MAP.
var specialIndex = map[string]int{
	checkpointer.ChannelError:     -1,
	checkpointer.ChannelScheduled: -2,
	checkpointer.ChannelInterrupt: -3,
	checkpointer.ChannelResume:    -4,
}

// WriteIndex is the idx a write is stored under: the special channel's
// negative index, or its position in the PutWrites call.
func WriteIndex(channel string, position int) int {
	if i, ok := specialIndex[channel]; ok {
		return i
	}
	return position
}

// IsSpecialChannel reports whether channel has a fixed negative write index.
func IsSpecialChannel(channel string) bool {
	_, ok := specialIndex[channel]
	return ok
}

// UpsertWrites reports whether a PutWrites call overwrites existing rows:
// true when every write targets a special channel (LangGraph's rule); false
// means insert-if-absent, so retries of the same task are idempotent.
func UpsertWrites(writes []checkpointer.Write) bool {
	for _, w := range writes {
		if !IsSpecialChannel(w.Channel) {
			return false
		}
	}
	return true
}
