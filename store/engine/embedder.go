package engine

// EmbedderName implements store.EmbedderNamer: the Name of the index's
// embedder, false when the store has no semantic index. Every store built
// on an Engine answers with it.
func (e *Engine) EmbedderName() (string, bool) {
	if e.b.Index == nil || e.b.Index.Embedder == nil {
		return "", false
	}
	return e.b.Index.Embedder.Name(), true
}
