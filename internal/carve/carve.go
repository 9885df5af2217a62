package carve

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"os"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/aead"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/serde"
)

// Value is a value as it was stored under the key searched for: its type
// tag, the associated data of where it lives and its envelope's length.
// A window of the file that opens as one of them is an image of it.
type Value struct {
	Typ string
	AAD []byte
	Len int
}

// Found is what Scan found.
type Found struct {
	// Headers counts envelope headers naming the key (version byte and key
	// id, raw or base64 as the store keeps it): images of a value sealed
	// under it, whole or not.
	Headers int
	// Opened counts the windows at those headers that decrypt with the key.
	Opened int
}

// Scan searches files (those that exist) for envelopes under key: every
// header naming it, and whether the window there decrypts as one of
// values.
func Scan(files []string, key *crypto.Key, values []Value) (Found, error) {
	ring, err := crypto.NewKeyring(key)
	if err != nil {
		return Found{}, err
	}
	open, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		return Found{}, err
	}
	id := key.ID()
	header := append([]byte{aead.EnvelopeV1}, id[:]...)
	// The store keeps an envelope in base64 inside JSON: 9 header bytes are
	// the first 12 characters of it.
	header64 := []byte(base64.StdEncoding.EncodeToString(header))
	var f Found
	for _, name := range files {
		b, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return f, err
		}
		for _, at := range all(b, header) {
			f.Headers++
			if opens(open, values, func(n int) []byte { return window(b, at, n) }) {
				f.Opened++
			}
		}
		for _, at := range all(b, header64) {
			f.Headers++
			if opens(open, values, func(n int) []byte {
				w := window(b, at, base64.StdEncoding.EncodedLen(n))
				d, err := base64.StdEncoding.DecodeString(string(w))
				if err != nil {
					return nil
				}
				return d
			}) {
				f.Opened++
			}
		}
	}
	return f, nil
}

func opens(s *serde.Encrypted, values []Value, window func(n int) []byte) bool {
	for _, v := range values {
		w := window(v.Len)
		if len(w) != v.Len {
			continue
		}
		if _, err := s.LoadsTypedWith(v.Typ, w, v.AAD); err == nil {
			return true
		}
	}
	return false
}

func all(b, sub []byte) []int {
	var out []int
	for i := 0; ; {
		j := bytes.Index(b[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + 1
	}
}

func window(b []byte, at, n int) []byte {
	if at+n > len(b) {
		return nil
	}
	return b[at : at+n]
}

// Stored reads the values of a memvault SQLite database as they are now
// (checkpoint_blobs, checkpoint_writes and store, whichever exist), for
// Scan after they are resealed under another key.
func Stored(ctx context.Context, db *sql.DB) ([]Value, error) {
	var out []Value
	q := func(query string, scan func(rows *sql.Rows) (Value, error)) error {
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			return nil // no such table
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			if v.Len > 0 {
				out = append(out, v)
			}
		}
		return rows.Err()
	}
	err := q(`SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE blob IS NOT NULL`, func(rows *sql.Rows) (Value, error) {
		var t, ns, ch, v, typ string
		var data []byte
		err := rows.Scan(&t, &ns, &ch, &v, &typ, &data)
		return Value{typ, binding.AAD(binding.Blob{Thread: t, NS: ns, Channel: ch, Version: v}), len(data)}, err
	})
	if err == nil {
		err = q(`SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, coalesce(type, ''), blob FROM checkpoint_writes WHERE blob IS NOT NULL`, func(rows *sql.Rows) (Value, error) {
			var t, ns, id, task, ch, typ string
			var idx int
			var data []byte
			err := rows.Scan(&t, &ns, &id, &task, &idx, &ch, &typ, &data)
			return Value{typ, binding.AAD(binding.Write{Thread: t, NS: ns, Checkpoint: id, Task: task, Idx: idx, Channel: ch}), len(data)}, err
		})
	}
	if err == nil {
		err = q(`SELECT prefix, key, CAST(value AS BLOB) FROM store`, func(rows *sql.Rows) (Value, error) {
			var ns, key string
			var raw []byte
			if err := rows.Scan(&ns, &key, &raw); err != nil {
				return Value{}, err
			}
			typ, data, ok, err := envelope.Parse(raw)
			if !ok || err != nil {
				return Value{}, err
			}
			return Value{typ, binding.AAD(binding.Item{Namespace: ns, Key: key}), len(data)}, nil
		})
	}
	return out, err
}
