package keys

import (
	"context"
	"errors"
	"time"
)

// ErrKeyExists is returned by Table.Insert when the subject already has a
// key of that version (another process created it first).
var ErrKeyExists = errors.New("keys: data key version exists")

// WrappedKey is a data key as a Table keeps it: wrapped, never in the
// clear.
type WrappedKey struct {
	// Subject owns the key.
	Subject string
	// Version counts the subject's keys from 1; the newest seals.
	Version int
	// ID is the data key's id (crypto.KeyID in hex), as envelope headers
	// name it.
	ID string
	// KEK is the KEKID of the provider that wrapped it.
	KEK string
	// Wrapped is the sealed key.
	Wrapped []byte
	// Created is when the key was made.
	Created time.Time
}

// ThreadTable is a Table that also records which subject each thread
// belongs to, for Subjects.ThreadMetadataKey. Every table of this module
// implements it.
type ThreadTable interface {
	Table
	// BindThread binds thread to subject unless it is bound already, and
	// returns the subject it is bound to.
	BindThread(ctx context.Context, thread, subject string) (string, error)
	// BoundSubject returns the subject thread is bound to ("" for none).
	BoundSubject(ctx context.Context, thread string) (string, error)
	// SubjectThreads returns the threads bound to subject, and every
	// thread that follows one of them (FollowThread), transitively: the
	// threads an erasure of subject reaches.
	SubjectThreads(ctx context.Context, subject string) ([]string, error)
	// FollowThread records that thread is a copy of source, before the
	// copy's values are written, so that an erasure of the subject source
	// is bound to — now or later, in any process — reaches the copy too:
	// StartErasure destroys the own keys of every thread following one of
	// the subject's threads, transitively (copies of copies), and binds
	// those not bound yet to the subject, as tombstones. It fails with
	// ErrSubjectErased when source is bound to a subject erased and not
	// readmitted (the erasure bound the unbound copies it reached, so a
	// copy of one is refused too; a copy bound to another subject, whose
	// keys and rows the erasure took, is not), and it is serialized with
	// StartErasure: a record that commits after an erasure's sees it.
	FollowThread(ctx context.Context, thread, source string) error
	// UnbindThreads deletes the bindings of subject's threads.
	UnbindThreads(ctx context.Context, subject string) error
}

// Identified is a Table with an id of its own, random and made once when
// the table is created: a data database records the id of the table that
// holds its subjects' keys, so that a process pointed at another table —
// a new, empty one that knows nothing of past erasures — is refused
// (vault.ErrSubjectsChanged). The SQLite and PostgreSQL tables implement
// it; an in-memory table has no id.
//
// Its count of erasures tells a copy or a backup of the table from the
// table itself once an erasure ran on either: the data database records
// the count it has seen (vault), and a table that counts fewer is one that
// still holds keys an erasure destroyed.
type Identified interface {
	// TableID returns the table's id.
	TableID(ctx context.Context) (string, error)
	// Erasures returns how many erasures the table has started, ever:
	// StartErasure counts each call, a run finishing a killed one
	// included, in its own transaction.
	Erasures(ctx context.Context) (int64, error)
}

// Table keeps wrapped data keys. Implementations are safe for concurrent
// use, also by several processes sharing the table. Keep it apart from the
// data (another SQLite file, PostgreSQL schema or database) when erasure
// must survive restored backups of the data.
type Table interface {
	// Keys returns subject's keys, newest version first.
	Keys(ctx context.Context, subject string) ([]WrappedKey, error)
	// Insert adds k; ErrKeyExists when the subject has that version.
	Insert(ctx context.Context, k WrappedKey) error
	// Destroy deletes every key of subject so that it cannot be read back
	// from the table's storage, and returns what it deleted.
	Destroy(ctx context.Context, subject string) ([]WrappedKey, error)
	// Rewrap replaces the wrapping of one key, if it is still wrapped by
	// oldKEK, and reports whether it did.
	Rewrap(ctx context.Context, subject string, version int, oldKEK, newKEK string, wrapped []byte) (bool, error)
	// Page lists keys in (subject, version) order after the given one, at
	// most limit of them.
	Page(ctx context.Context, afterSubject string, afterVersion, limit int) ([]WrappedKey, error)
}

// KEKLister is a Table that lists the KEKs its keys are wrapped by, from
// an index on the wrapping KEK: one lookup per distinct KEK, whatever the
// number of keys. Hierarchy.UnknownKEKs reads it at Open. The SQLite,
// PostgreSQL and in-memory tables implement it.
type KEKLister interface {
	// KEKs returns the distinct KEK ids (WrappedKey.KEK) of the table's
	// keys in ascending order, at most limit of them.
	KEKs(ctx context.Context, limit int) ([]string, error)
}
