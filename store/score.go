package store

// Valid reports whether d is a known distance (or empty, meaning Cosine).
func (d Distance) Valid() bool {
	switch d {
	case "", Cosine, L2, InnerProduct:
		return true
	}
	return false
}
