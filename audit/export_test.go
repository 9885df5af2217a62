package audit

// LegacyMAC is the MAC an earlier memvault (format 1) gave r after the
// record whose MAC is prev, under key: for the external tests, which forge
// such records as whoever holds key could.
func LegacyMAC(key []byte, prev string, r *Record) string {
	k := newAuditKey(key)
	return macV1(&k, prev, r)
}

// Tamper gives the tests the stored records to edit, delete, insert or
// reorder, as an attacker with write access to the table could. Test-only:
// no production code can rewrite a MemoryTable.
func (m *MemoryTable) Tamper(edit func([]Record) []Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = edit(m.records)
}
