package engine

// Queued is how many writes wait in s's group committer (0 without one):
// the tests hold a commit and wait until the writes they started queue.
func Queued(s *Saver) int {
	if s.group == nil {
		return 0
	}
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue)
}

// Busy reports whether a commit of s's group committer is in flight.
func Busy(s *Saver) bool {
	if s.group == nil {
		return false
	}
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return s.group.flying > 0
}
