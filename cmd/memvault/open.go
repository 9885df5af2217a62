package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

// handle is the wired saver and store a command works on.
type handle = vault.Handle

// withHandle opens the configured database, which must exist, runs fn and
// closes it. Every command but those that write new data opens this way:
// a mistyped --db, MEMVAULT_DB or schema is reported (vault.ErrNotFound,
// naming the path) instead of being created empty and read as "no threads",
// and a key or audit table that went missing is not replaced by an empty
// one (which `audit verify` would call intact).
func withHandle(ctx context.Context, g *globals, fn func(h *handle) error) (err error) {
	cfg, err := g.config()
	if err != nil {
		return err
	}
	return withConfig(ctx, cfg, fn)
}

// withNewHandle is withHandle for the commands that write new data
// (migrate, store put, threads import): they create the database and its
// tables when missing.
func withNewHandle(ctx context.Context, g *globals, fn func(h *handle) error) (err error) {
	cfg, err := g.config()
	if err != nil {
		return err
	}
	return withNewConfig(ctx, cfg, fn)
}

// withHandleNote is withHandle for a command that fixes what Open warns
// about (keys reencrypt re-embeds the vectors the warning tells to
// re-embed): note rewrites each warning before it is printed. reportOnly
// is config.Config.ReportOnly (a dry run).
func withHandleNote(ctx context.Context, g *globals, reportOnly bool, note func(string) string, fn func(h *handle) error) (err error) {
	cfg, err := g.config()
	if err != nil {
		return err
	}
	cfg.MustExist, cfg.ReportOnly = true, reportOnly
	return open(ctx, cfg, note, fn)
}

// withConfig is withHandle on a configuration the command adjusted.
func withConfig(ctx context.Context, cfg config.Config, fn func(h *handle) error) (err error) {
	cfg.MustExist = true
	return open(ctx, cfg, nil, fn)
}

// withNewConfig is withNewHandle on a configuration the command adjusted.
func withNewConfig(ctx context.Context, cfg config.Config, fn func(h *handle) error) (err error) {
	cfg.MustExist = false
	return open(ctx, cfg, nil, fn)
}

func open(ctx context.Context, cfg config.Config, note func(string) string, fn func(h *handle) error) (err error) {
	h, err := vault.Open(ctx, cfg)
	if errors.Is(err, vault.ErrNotFound) {
		return fmt.Errorf("%w (this command opens existing databases only; `memvault migrate` creates one)", err)
	}
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.Close()) }()
	printWarnings(h, note)
	return fn(h)
}

// printWarnings prints what Open warns about on stderr, each warning
// rewritten by note when it is not nil.
func printWarnings(h *handle, note func(string) string) {
	for _, w := range h.Warnings {
		if note != nil {
			fmt.Fprintln(os.Stderr, "memvault:", note(w))
			continue
		}
		fmt.Fprintln(os.Stderr, "memvault: warning:", w)
	}
}

// needStore runs fn when the handle has a store, and fails otherwise with
// an error wrapping vault.ErrNoStore (a backend whose store is not there
// yet: fn would find Handle.Store nil).
func needStore(fn func(h *handle) error) func(h *handle) error {
	return func(h *handle) error {
		if err := h.NeedStore(); err != nil {
			return err
		}
		return fn(h)
	}
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "<unprintable>"
	}
	return string(b)
}
