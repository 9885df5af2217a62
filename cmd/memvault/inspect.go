package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/inspector"
)

// errNotLoopback refuses to serve the inspector — decrypted agent state —
// in clear text to the network.
var errNotLoopback = errors.New("inspect: listening on a non-loopback address needs --tls-cert and --tls-key (or --dangerously-listen-without-tls)")

// newInspectCmd is `memvault inspect`: the web inspector (package
// inspector) behind a one-time token, on loopback unless told otherwise.
func newInspectCmd(g *globals) *cobra.Command {
	var listen, certFile, keyFile string
	var noTLS, allowWrite bool
	cmd := &cobra.Command{
		Use:   "inspect [--listen 127.0.0.1:0]",
		Short: "Serve a web inspector of threads, memories, keys and the audit trail (read-only unless --allow-write; one-time token, loopback)",
		Long: `inspect serves the web inspector of the configured database until interrupted:
threads and their checkpoints (a timeline with forks, decrypted values, pending
writes, a diff against the parent), memories (namespace tree, items, semantic
search), the key census and the audit trail with its verification status.

It prints the URL to open, with a one-time token, on a line of its own. The
token is exchanged for a session cookie (HttpOnly, SameSite=Strict) on first use
and works once; every request without the cookie answers 401. It listens on
loopback (127.0.0.1, a free port) unless --listen names another address, which
needs --tls-cert and --tls-key, or --dangerously-listen-without-tls. With
MEMVAULT_AUDIT=true every view that decrypts is recorded in the audit trail
under the principal "inspector"; the keys page lists the subjects that have
keys and shows a subject's erasure; the audit page shows the retention
settings.

It writes nothing unless --allow-write: then a thread's page can delete the
thread, a checkpoint's can fork it with changed channel values, and a subject
looked up on the keys page can be erased, each after a
confirmation page where the target is typed again, by a POST carrying a
per-session CSRF token from the inspector's own origin, and recorded in the
audit trail. Without the flag every such request answers 403.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json {
				// Its one line of output is the URL to open; what it serves
				// is for people.
				return usagef("inspect serves pages for people and prints their URL; it has no --json output")
			}
			if (certFile == "") != (keyFile == "") {
				return usagef("--tls-cert and --tls-key go together")
			}
			useTLS := certFile != ""
			loop, err := isLoopback(listen)
			if err != nil {
				return usagef("--listen %q: %v", listen, err)
			}
			if !loop && !useTLS && !noTLS {
				return usageError{errNotLoopback}
			}
			var tlsConfig *tls.Config
			if useTLS {
				cert, err := tls.LoadX509KeyPair(certFile, keyFile)
				if err != nil {
					return fmt.Errorf("inspect: --tls-cert/--tls-key: %w", err)
				}
				tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
			}
			cfg, err := g.config()
			if err != nil {
				return err
			}
			return withConfig(cmd.Context(), cfg, func(h *handle) error {
				in, err := inspector.New(h, inspector.Options{AllowWrite: allowWrite,
					Retention: &inspector.Retention{Policy: cfg.Retention, SweepInterval: cfg.RetentionSweepInterval}})
				if err != nil {
					return err
				}
				gate, token, err := inspector.NewTokenGate(in, useTLS)
				if err != nil {
					return err
				}
				return serveInspector(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), listen, tlsConfig, gate, token, allowWrite)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to listen on (port 0: a free one)")
	cmd.Flags().StringVar(&certFile, "tls-cert", "", "TLS certificate file (PEM): serve HTTPS")
	cmd.Flags().StringVar(&keyFile, "tls-key", "", "TLS private key file (PEM)")
	cmd.Flags().BoolVar(&allowWrite, "allow-write", false, "offer the write actions (delete a thread, fork a checkpoint, erase a subject), each confirmed and audited")
	cmd.Flags().BoolVar(&noTLS, "dangerously-listen-without-tls", false, "allow a non-loopback --listen without TLS: decrypted state and the token cross the network in clear text")
	return cmd
}

// isLoopback reports whether addr (host:port) listens on loopback only.
// An empty host is every interface.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// inspectServer is the inspector's HTTP server: every phase of a request
// is bounded, so that a client that opens connections and sends slowly (or
// never reads) cannot hold the server's connections and goroutines. A page
// is rendered whole before it is written (a thread of 1 000 checkpoints
// takes well under a second); WriteTimeout leaves room for a large value's
// download on a slow link.
func inspectServer(ctx context.Context, h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}

// serveInspector listens, prints the URL with the token on a line of its
// own, and serves until ctx ends.
func serveInspector(ctx context.Context, out, errw io.Writer, listen string, tlsConfig *tls.Config, h http.Handler, token string, write bool) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", listen)
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConfig)
	}
	srv := inspectServer(ctx, h)
	mode := "read-only"
	if write {
		mode = "WRITE ACTIONS ON: threads can be deleted or forked and subjects erased"
	}
	fmt.Fprintf(errw, "memvault: inspector serving (%s); open this URL once, then press Ctrl-C to stop:\n", mode)
	fmt.Fprintf(out, "%s://%s/?token=%s\n", scheme, ln.Addr(), token)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("inspect: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	<-done
	return nil
}
