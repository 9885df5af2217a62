package audit

// LegacyMAC is the MAC an earlier memvault (format 1) gave r after the
// record whose MAC is prev, under key: for the external tests, which forge
// such records as whoever holds key could.
func LegacyMAC(key []byte, prev string, r *Record) string {
	k := newAuditKey(key)
	return macV1(&k, prev, r)
}
