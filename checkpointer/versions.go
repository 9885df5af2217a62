package checkpointer

// VersionStyle chooses how NextVersion spells channel versions.
type VersionStyle int

const (
	// VersionString is Python LangGraph's style: "%032d.<random fraction>",
	// for example "00000000000000000000000000000002.0.5488135039273248". The
	// random suffix tells forks apart; only the integer part orders versions.
	VersionString VersionStyle = iota
	// VersionInt is plain integers ("1", "2", ...), which JS LangGraph writes
	// and requires.
	VersionInt
)
