package vault

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/internal/aead"
	"github.com/memvault/memvault/serde"
)

// ErrKeyNotLoaded is what Open returns when the database holds data made
// under a key the configuration does not load — a wrong LANGGRAPH_AES_KEY,
// none at all, or a previous key left out of LANGGRAPH_AES_KEY_PREVIOUS.
// The message names that key's id and the ids of the loaded keys (ids
// only, never key bytes) and what to set; without this check the symptom
// was a misleading "vectors were made by another embedder" or a bare
// "decryption failed" on the first read.
var ErrKeyNotLoaded = errors.New("vault: the database holds data under a key that is not loaded")

// ErrPlaintextData is what Open returns when encryption is on and the
// database holds plaintext values (written before a key was set), unless
// the configuration allows plaintext (config.Config.DangerousAllowPlaintext,
// MEMVAULT_ALLOW_PLAINTEXT, the migration mode). It wraps
// serde.ErrPlaintextRefused. Without it such a database opened, every read
// of its plaintext rows failed, and new writes went in encrypted beside
// them, which a reader without the key could no longer read either.
var ErrPlaintextData = errors.New("vault: the database holds plaintext values and encryption is on")

// keyNotLoaded is ErrKeyNotLoaded about what (the store's vectors, the
// stored values) under the key of id ("" when the format records none).
func (h *Handle) keyNotLoaded(what, id string) error {
	loaded := "no key is loaded (LANGGRAPH_AES_KEY is not set)"
	if ids := h.KeyIDs(); len(ids) > 0 {
		loaded = "the loaded keys are " + strings.Join(ids, ", ")
	}
	under := "under a key"
	if id != "" {
		under = "under key " + id
	}
	subjects := ""
	if h.Keys == nil {
		subjects = "; a data subject's key needs per-subject keys on (MEMVAULT_SUBJECT_NAMESPACE, MEMVAULT_SUBJECT_THREAD_SEPARATOR) as when it was written"
	}
	return fmt.Errorf("%w: %s %s, and %s: set LANGGRAPH_AES_KEY to that key, or, to move to a new key, set the new one there and that one in LANGGRAPH_AES_KEY_PREVIOUS, then run `memvault keys reencrypt`%s (a key that is lost: MEMVAULT_DANGEROUS_SKIP_KEY_CHECK=true opens anyway, to delete what it sealed)",
		ErrKeyNotLoaded, what, under, loaded, subjects)
}

// checkKEKs refuses a key table holding data keys wrapped by a KEK no
// configured provider holds (keys.Hierarchy.UnknownKEKs: one loose index
// scan, one seek per distinct KEK). With per-subject keys, a subject's
// values are under the subject's data key, whose id no master key has, so
// checkValueKeys cannot tell a wrong LANGGRAPH_AES_KEY; without this, Open
// went on and the first new subject's key was wrapped under the wrong key,
// beside keys it cannot unwrap. Names KEK ids only, never key bytes.
func (h *Handle) checkKEKs(ctx context.Context) error {
	if h.Keys == nil {
		return nil
	}
	unknown, err := h.Keys.UnknownKEKs(ctx)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if len(unknown) == 0 {
		return nil
	}
	for i, k := range unknown {
		unknown[i] = strconv.Quote(truncateID(k))
	}
	return fmt.Errorf("%w: the key table's data keys are wrapped by KEK %s, which no configured key or provider holds "+
		"(the configured KEKs are %s; an env: KEK is derived from the master key of that id): set LANGGRAPH_AES_KEY to that key, "+
		"or, to move to a new key, set the new one there and that one in LANGGRAPH_AES_KEY_PREVIOUS, then run `memvault keys rotate-kek`; "+
		"an HSM's KEK (pkcs11:) needs its provider (config.Config.KEKProviders) (a key that is lost: MEMVAULT_DANGEROUS_SKIP_KEY_CHECK=true "+
		"opens anyway, to forget the subjects whose keys it wrapped)",
		ErrKeyNotLoaded, strings.Join(unknown, ", "), strings.Join(h.Keys.KEKIDs(), ", "))
}

// truncateID bounds an id read from a table in a message: a row someone
// wrote by hand may hold anything.
func truncateID(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "…"
}

// hasKey reports whether a key of id is loaded.
func (h *Handle) hasKey(id string) bool {
	for _, k := range h.KeyIDs() {
		if strings.EqualFold(k, id) {
			return true
		}
	}
	return false
}

// vectorKeyID returns the key id an embedder's recorded name says its
// vectors were keyed or sealed under ("hash:256+keyed:<id>",
// "<model>+sealed:<id>", either followed by "+subjects:…"); "" for vectors
// of the public embedder.
func vectorKeyID(name string) string {
	for _, mark := range []string{"+keyed:", "+sealed:"} {
		if _, rest, ok := strings.Cut(name, mark); ok {
			id, _, _ := strings.Cut(rest, "+")
			return id
		}
	}
	return ""
}

// checkValueKeys reads the first stored value of each value table (one row
// each: it scans nothing) and refuses to go on when one is sealed and no
// key can open it: with no key loaded, any sealed value (a process
// writing plaintext into an encrypted database would mix the two); with
// master keys, a memvault envelope under a key id none of them has. With
// per-subject keys a value's key id may be a subject's, which the keyring
// does not list: then only the first case is checked.
//
// With a key loaded, a plaintext value is refused too (ErrPlaintextData)
// unless allowPlaintext: the database was written before encryption was
// turned on, and its migration is the way to use it with the key.
func (h *Handle) checkValueKeys(ctx context.Context, allowPlaintext bool) error {
	var probes [][2]string // (type tag or cipher, key id)
	var err error
	switch {
	case h.Pool != nil:
		probes, err = h.postgresProbe(ctx)
	case h.dbPath != "" && h.dbPath != sqliteMemory:
		probes, err = h.sqliteProbe(ctx)
	}
	if err != nil {
		return fmt.Errorf("vault: read the key of a stored value: %w", err)
	}
	for _, p := range probes {
		cipher, id := p[0], p[1]
		switch {
		case cipher == "" && h.Keyring != nil && !allowPlaintext:
			return plaintextData()
		case cipher == "":
			continue // plaintext, read as such
		case h.Keyring == nil:
			return h.keyNotLoaded("its values are encrypted ("+cipher+")", id)
		case id != "" && h.Keys == nil && !h.hasKey(id):
			return h.keyNotLoaded("its values are encrypted", id)
		}
	}
	return nil
}

// plaintextData is ErrPlaintextData with the two ways out; it is
// serde.ErrPlaintextRefused too, the error each read would have returned.
func plaintextData() error {
	return plaintextDataError{ErrPlaintextData.Error() + ": to encrypt them, run `memvault keys reencrypt` once with MEMVAULT_ALLOW_PLAINTEXT=true (config.Config.DangerousAllowPlaintext), then go on without it; to keep the database in plaintext, unset LANGGRAPH_AES_KEY (or set MEMVAULT_ENCRYPTION=off)"}
}

type plaintextDataError struct{ msg string }

func (e plaintextDataError) Error() string { return e.msg }

func (e plaintextDataError) Is(target error) bool {
	return target == ErrPlaintextData || target == serde.ErrPlaintextRefused
}

// The first value of each table: its cipher ("" for plaintext) and, for
// the envelope, its key id (crypto/doc.go: bytes 1–8 of the sealed value;
// the store keeps the envelope's base64 under "d"). A blob row of type
// "empty" (a channel without a value, which LangGraph writes unsealed in
// every mode) holds no value and is passed over.
const (
	probeBlobs  = `SELECT type, %s FROM %s WHERE type <> 'empty' LIMIT 1`
	probeStore  = `SELECT value FROM %s LIMIT 1`
	storeSealed = "__memvault_enc__"
)

func (h *Handle) sqliteProbe(ctx context.Context) ([][2]string, error) {
	db, err := sql.Open("sqlite", "file:"+h.dbPath+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var out [][2]string
	for _, table := range []string{"checkpoint_blobs", "checkpoint_writes"} {
		var typ string
		var head []byte
		err := db.QueryRowContext(ctx, fmt.Sprintf(probeBlobs, "substr(blob, 1, 9)", table)).Scan(&typ, &head)
		if err == nil {
			out = append(out, blobKey(typ, head))
		} else if !errors.Is(err, sql.ErrNoRows) && !strings.Contains(err.Error(), "no such table") {
			return nil, fmt.Errorf("%s: %w", table, err)
		}
	}
	var value []byte
	err = db.QueryRowContext(ctx, fmt.Sprintf(probeStore, "store")).Scan(&value)
	if err == nil {
		out = append(out, storeKey(value))
	} else if !errors.Is(err, sql.ErrNoRows) && !strings.Contains(err.Error(), "no such table") {
		return nil, fmt.Errorf("store: %w", err)
	}
	return out, nil
}

func (h *Handle) postgresProbe(ctx context.Context) ([][2]string, error) {
	ident := func(t string) string {
		if h.schema == "" {
			return pgx.Identifier{t}.Sanitize()
		}
		return pgx.Identifier{h.schema, t}.Sanitize()
	}
	var out [][2]string
	for _, table := range []string{"checkpoint_blobs", "checkpoint_writes"} {
		var typ string
		var head []byte
		err := h.Pool.QueryRow(ctx, fmt.Sprintf(probeBlobs, "substring(blob from 1 for 9)", ident(table))).Scan(&typ, &head)
		if err == nil {
			out = append(out, blobKey(typ, head))
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("%s: %w", table, err)
		}
	}
	var value []byte
	err := h.Pool.QueryRow(ctx, fmt.Sprintf(probeStore, ident("store"))).Scan(&value)
	if err == nil {
		out = append(out, storeKey(value))
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: %w", err)
	}
	return out, nil
}

// blobKey is the cipher and key id of a checkpoint value of type typ whose
// sealed bytes start with head.
func blobKey(typ string, head []byte) [2]string {
	_, cipher, _ := strings.Cut(typ, "+")
	if cipher == aead.EnvelopeName && len(head) == 9 {
		return [2]string{cipher, hex.EncodeToString(head[1:9])}
	}
	return [2]string{cipher, ""}
}

// storeKey is the cipher and key id of a store value (JSON): a sealed one
// is {"__memvault_enc__": …, "t": "<tag>+<cipher>", "d": "<base64>"}.
func storeKey(value []byte) [2]string {
	var sealed struct {
		Mark *json.RawMessage `json:"__memvault_enc__"`
		T    string           `json:"t"`
		D    string           `json:"d"`
	}
	if json.Unmarshal(value, &sealed) != nil || sealed.Mark == nil {
		return [2]string{}
	}
	_, cipher, _ := strings.Cut(sealed.T, "+")
	if cipher == "" {
		cipher = "sealed"
	}
	return [2]string{cipher, storeKeyID(cipher, sealed.D)}
}

// keyedMark is the memvault_meta row a process with a key writes at its
// first Open of a database: from then on a process without one is
// refused (ErrKeyNotLoaded) however its probe of the stored values reads.
// The probe reads a first row only, and a database moving to encryption
// (a key with MEMVAULT_ALLOW_PLAINTEXT, before `keys reencrypt`), or one
// where someone put a plaintext row first, showed it plaintext: a
// keyless process then wrote its secrets in the clear beside the sealed
// ones.
const keyedMark = "values_sealed"

// requireKeyOnKeyedDatabase marks a database a keyed configuration opens
// (keyedMark) and refuses a keyless one on a marked database.
// MEMVAULT_DANGEROUS_SKIP_KEY_CHECK opens it anyway, without a key, as it
// opens one whose values are sealed; with a key it marks nothing (the key
// was not checked), nor does config.Config.ReportOnly.
func requireKeyOnKeyedDatabase(ctx context.Context, c config.Config, h *Handle) error {
	marks, ok := auditMeta(c, h).(dataMarks)
	if !ok {
		return nil
	}
	marked, err := marks.Marked(ctx, keyedMark)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	switch {
	case h.Keyring != nil && !marked && !c.DangerousSkipKeyCheck && !c.ReportOnly:
		// Not a process that skipped the key check (`keys census`, run
		// with a key exported on a plaintext database, or a key nobody
		// has checked against the values), nor one that only reports
		// (a dry run): neither writes a sealed value.
		if err := marks.Mark(ctx, keyedMark, "1"); err != nil {
			return fmt.Errorf("vault: %w", err)
		}
	case h.Keyring == nil && marked && !c.DangerousSkipKeyCheck:
		return h.keyNotLoaded("a process with a key has written to it: its values are encrypted", "")
	}
	return nil
}
