package inspector

import (
	"net/http"

	"github.com/memvault/memvault/vault"
)

// keysView is the keys page: the configured key ids and the census.
type keysView struct {
	Encrypted bool
	KeyIDs    []string
	Subjects  bool
	Rows      []vault.CensusRow
	// Retired counts the values under a key that is not the primary: what
	// must be re-encrypted before that key is retired.
	Retired int64
}

// keys shows the key census: stored values per table, cipher and key id,
// counted in SQL (nothing decrypted, nothing recorded).
func (in *Inspector) keys(r *http.Request) (string, any, error) {
	rows, err := in.h.Census(r.Context())
	if err != nil {
		return "", nil, err
	}
	v := &keysView{Encrypted: in.h.Keyring != nil, KeyIDs: in.h.KeyIDs(), Subjects: in.h.Keys != nil, Rows: rows}
	for _, row := range rows {
		if row.Role != "" && row.Role != "primary" && row.Cipher != "" {
			v.Retired += row.Rows
		}
	}
	return "Keys", v, nil
}
