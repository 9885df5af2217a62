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
