package keys

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
)

// intentPrefix opens an authenticated erasure intent: "v2:<MAC>:<subject>".
// Session 23's intents held the bare subject, which anyone who can write
// to the data database could forge.
const intentPrefix = "v2:"

// SignIntent returns the stored form of the intent to erase subject, the
// n-th erasure of the key table tableID: the subject and a MAC under the
// primary master key's audit key over the three. Someone who can write to
// the data database only cannot make one that OpenIntent accepts, so
// cannot have a process destroy a subject's keys.
func (h *Hierarchy) SignIntent(tableID string, n int64, subject string) string {
	return intentPrefix + intentMAC(h.auditKeys[0], tableID, n, subject) + ":" + subject
}

// OpenIntent returns the subject of an intent SignIntent made for the
// same table and number under one of this Hierarchy's master keys; ok is
// false for anything else (a bare subject, a forged or moved row).
func (h *Hierarchy) OpenIntent(tableID string, n int64, value string) (subject string, ok bool) {
	rest, found := strings.CutPrefix(value, intentPrefix)
	if !found {
		return "", false
	}
	mac, subject, found := strings.Cut(rest, ":")
	if !found || subject == "" {
		return "", false
	}
	for _, k := range h.auditKeys {
		if hmac.Equal([]byte(mac), []byte(intentMAC(k, tableID, n, subject))) {
			return subject, true
		}
	}
	return "", false
}

func intentMAC(key []byte, tableID string, n int64, subject string) string {
	m := hmac.New(sha256.New, key)
	for _, f := range []string{"memvault/erasure-intent/v2", tableID, strconv.FormatInt(n, 10), subject} {
		m.Write(binary.AppendUvarint(nil, uint64(len(f))))
		m.Write([]byte(f))
	}
	return hex.EncodeToString(m.Sum(nil))
}
