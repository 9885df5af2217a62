package bench

import (
	"bytes"
	"context"
	"errors"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
)

// addAudited adds the audited column to env: its encrypted saver with
// every operation recorded in an audit trail (audit.Saver) in the data's
// own database — on PostgreSQL a memvault_audit table in env's schema, on
// SQLite the data file (MEMVAULT_AUDIT_TABLE set to it) — so that a
// write's record commits in the write's own transaction
// (audit.Options.WritesInTx) and a read's in a group commit. The column
// sits beside encrypted in the same run, so that their ratio is the
// trail's cost on this machine.
func addAudited(ctx context.Context, env *cpEnv) error {
	enc := env.savers["encrypted"]
	if enc == nil {
		return errors.New("bench: the audited column needs the encrypted saver")
	}
	var table audit.Table
	switch {
	case env.pool != nil:
		t, err := pgaudit.New(env.pool, pgaudit.Options{Schema: env.schema})
		if err != nil {
			return err
		}
		if err := t.Setup(ctx); err != nil {
			return err
		}
		table = t
	case env.path != "":
		t, err := sqliteaudit.Open(ctx, env.path)
		if err != nil {
			return err
		}
		prev := env.close
		env.close = func() { t.Close(); prev() }
		table = t
	default:
		return errors.New("bench: the audited column needs a PostgreSQL schema or a SQLite file")
	}
	tr, err := auditTrail(table, true)
	if err != nil {
		return err
	}
	env.savers[auditedMode] = audit.NewSaver(enc, tr, nil)
	return nil
}

// auditTrail is the trail of table under an audit key derived, as
// vault.Open derives it, from a fixed bench master key; inTx: the data
// lives in the trail's database (audit.Options.WritesInTx).
func auditTrail(table audit.Table, inTx bool) (*audit.Trail, error) {
	k, err := crypto.NewKey(bytes.Repeat([]byte{0x42}, 32))
	if err != nil {
		return nil, err
	}
	ak, err := keys.DeriveAuditKey(k)
	if err != nil {
		return nil, err
	}
	return audit.NewTrail(table, audit.Options{Key: ak, WritesInTx: inTx})
}
