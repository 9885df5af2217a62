package recall

import (
	"strings"

	"github.com/memvault/memvault/store"
)

// HashingMinScore is the default threshold for the offline hashing
// embedder. Measured on the texts of the demo, the adapters' tests and
// examples and the first-hour report (10 matching and 31 unrelated
// query/memory pairs, 1 000 random keys, 256 dimensions): it misses 0.06%
// of the matching pairs (0.25 missed 6%) and lets 8% of the unrelated ones
// through, ranked after the matches; at 1 024 dimensions it misses 0.01%
// and lets 4% through.
const HashingMinScore = 0.10

// NeuralMinScore is the default threshold for a neural model behind an
// OpenAI-compatible API (package embeddings/openai).
const NeuralMinScore = 0.25

// MinScore returns the default threshold for st's embedder and true, or
// false when st cannot name its embedder or the embedder is not one of
// memvault's: the caller should then rank instead of thresholding.
func MinScore(st store.Store) (float64, bool) {
	name, ok := store.EmbedderNameOf(st)
	if !ok {
		return 0, false
	}
	switch {
	case strings.HasPrefix(name, "hash:"):
		return HashingMinScore, true
	case strings.HasPrefix(name, "openai:"):
		return NeuralMinScore, true
	}
	return 0, false
}
