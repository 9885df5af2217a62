package postgres

// SetCopyMin sets how many items a write puts before it goes through COPY,
// so that tests can run small batches (1: every put) through the bulk path.
func SetCopyMin(s *Store, n int) { s.copyMin = n }

// ExactSearches reports how many searches of s fell back to the exact query.
func ExactSearches(s *Store) int64 { return s.exactSearches.Load() }
