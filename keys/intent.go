package keys

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
)

// intentPrefix opens an authenticated erasure intent:
// "v3:<MAC>:<prior>:<subject>". Session 23's intents held the bare
// subject, which anyone who can write to the data database could forge.
const intentPrefix = "v3:"

// SignIntent returns the stored form of the intent to erase subject, the
// n-th erasure of the key table tableID, whose erasure record was prior
// (ErasureStamp) when the intent was made: the subject, prior and a MAC
// under the primary master key's audit key over the four. Someone who can
// write to the data database only cannot make one that OpenIntent
// accepts, so cannot have a process destroy a subject's keys; nor can an
// old intent, replayed, erase the subject again once it was readmitted
// (its record is no longer prior).
func (h *Hierarchy) SignIntent(tableID string, n int64, subject, prior string) string {
	return intentPrefix + intentMAC(h.auditKeys[0], tableID, n, subject, prior) + ":" + prior + ":" + subject
}

// ErasureStamp names an erasure record (Erasure) in an intent: "" for
// none, else the time it started, which each erasure of a subject sets
// anew (a rerun of the same erasure keeps it).
func ErasureStamp(e *Erasure) string {
	if e == nil {
		return ""
	}
	return strconv.FormatInt(e.Started.UnixMicro(), 10)
}

// OpenIntent returns the subject and prior record of an intent SignIntent
// made for the same table and number under one of this Hierarchy's master
// keys; ok is false for anything else (a bare subject, a forged or moved
// row, one signed under a key this Hierarchy does not hold).
func (h *Hierarchy) OpenIntent(tableID string, n int64, value string) (subject, prior string, ok bool) {
	mac, prior, subject, ok := parseIntent(value)
	if !ok {
		return "", "", false
	}
	for _, k := range h.auditKeys {
		if hmac.Equal([]byte(mac), []byte(intentMAC(k, tableID, n, subject, prior))) {
			return subject, prior, true
		}
	}
	return "", "", false
}

// parseIntent splits SignIntent's form, "v3:<MAC>:<prior>:<subject>";
// ok is false for anything else.
func parseIntent(value string) (mac, prior, subject string, ok bool) {
	rest, found := strings.CutPrefix(value, intentPrefix)
	if !found {
		return "", "", "", false
	}
	if mac, rest, found = strings.Cut(rest, ":"); !found {
		return "", "", "", false
	}
	prior, subject, found = strings.Cut(rest, ":")
	return mac, prior, subject, found && subject != ""
}

// LooksLikeIntent reports whether value has the form SignIntent gives
// (prefix, a MAC of the right length, a subject), whatever key signed it:
// a row that does not is no intent at all.
func LooksLikeIntent(value string) bool {
	mac, _, _, ok := parseIntent(value)
	return ok && len(mac) == 2*sha256.Size && strings.Trim(mac, "0123456789abcdef") == ""
}

func intentMAC(key []byte, tableID string, n int64, subject, prior string) string {
	m := hmac.New(sha256.New, key)
	for _, f := range []string{"memvault/erasure-intent/v3", tableID, strconv.FormatInt(n, 10), subject, prior} {
		m.Write(binary.AppendUvarint(nil, uint64(len(f))))
		m.Write([]byte(f))
	}
	return hex.EncodeToString(m.Sum(nil))
}
