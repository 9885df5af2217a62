package checkpointer

// Special channels of pending writes (LangGraph's constants).
const (
	ChannelError     = "__error__"
	ChannelScheduled = "__scheduled__"
	ChannelInterrupt = "__interrupt__"
	ChannelResume    = "__resume__"
	// ChannelTasks carries Send packets; v<4 checkpoints stored them as
	// writes on the parent checkpoint (see MigratePendingSends).
	ChannelTasks = "__pregel_tasks"
)

// specialIndex is LangGraph's WRITES_IDX_MAP.
var specialIndex = map[string]int{
	ChannelError:     -1,
	ChannelScheduled: -2,
	ChannelInterrupt: -3,
	ChannelResume:    -4,
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
func UpsertWrites(writes []Write) bool {
	for _, w := range writes {
		if !IsSpecialChannel(w.Channel) {
			return false
		}
	}
	return true
}
