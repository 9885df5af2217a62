package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/memvault/memvault/config"
)

// handle is the wired saver and store a command works on.
type handle = config.Handle

// withHandle opens the configured database, runs fn and closes it.
func withHandle(ctx context.Context, g *globals, fn func(h *handle) error) (err error) {
	cfg, err := g.config()
	if err != nil {
		return err
	}
	return withConfig(ctx, cfg, fn)
}

// withConfig is withHandle on a configuration the command adjusted.
func withConfig(ctx context.Context, cfg config.Config, fn func(h *handle) error) (err error) {
	h, err := config.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, h.Close()) }()
	for _, w := range h.Warnings {
		fmt.Fprintln(os.Stderr, "memvault: warning:", w)
	}
	return fn(h)
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "<unprintable>"
	}
	return string(b)
}
