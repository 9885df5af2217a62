package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/store"
)

func newStoreCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Read and write long-term memories (namespaced items)"}

	var ttl time.Duration
	var index []string
	var noIndex bool
	put := &cobra.Command{
		Use:   "put NS... KEY JSON",
		Short: "Store a JSON object under a namespace and key",
		Args:  cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, key := store.Namespace(args[:len(args)-2]), args[len(args)-2]
			if err := checkItem(ns, key, true); err != nil {
				return err
			}
			v, err := jsonvalue.Unmarshal([]byte(args[len(args)-1]))
			obj, ok := v.(map[string]any)
			if err != nil || !ok {
				return usagef("the value must be a JSON object")
			}
			var opts []store.PutOption
			if cmd.Flags().Changed("ttl") {
				opts = append(opts, store.WithTTL(ttl))
			}
			if noIndex {
				opts = append(opts, store.WithoutIndex())
			} else if len(index) > 0 {
				opts = append(opts, store.WithIndex(index...))
			}
			return withNewHandle(cmd.Context(), g, needStore(func(h *handle) error {
				if err := h.Store.Put(cmd.Context(), ns, key, obj, opts...); err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"namespace": ns, "key": key, "stored": true})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "stored %s\n", itemPath(ns, key))
				return nil
			}))
		},
	}
	put.Flags().DurationVar(&ttl, "ttl", 0, "expire the item after this long (e.g. 24h)")
	put.Flags().StringSliceVar(&index, "index", nil, "field paths to embed instead of the configured ones")
	put.Flags().BoolVar(&noIndex, "no-index", false, "store without embedding")

	get := &cobra.Command{
		Use:   "get NS... KEY",
		Short: "Print one item",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, key := store.Namespace(args[:len(args)-1]), args[len(args)-1]
			if err := checkItem(ns, key, false); err != nil {
				return err
			}
			return withHandle(cmd.Context(), g, needStore(func(h *handle) error {
				it, err := h.Store.Get(cmd.Context(), ns, key)
				if err != nil {
					return err
				}
				if it == nil {
					return notFoundf("no item %s", itemPath(ns, key))
				}
				return printJSON(cmd.OutOrStdout(), itemJSON(it, nil))
			}))
		},
	}

	del := &cobra.Command{
		Use:   "delete NS... KEY",
		Short: "Delete one item",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, key := store.Namespace(args[:len(args)-1]), args[len(args)-1]
			if err := checkItem(ns, key, false); err != nil {
				return err
			}
			return withHandle(cmd.Context(), g, needStore(func(h *handle) error {
				if err := h.Store.Delete(cmd.Context(), ns, key); err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"namespace": ns, "key": key, "deleted": true})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", itemPath(ns, key))
				return nil
			}))
		},
	}

	var query, filter string
	var limit, offset int
	search := &cobra.Command{
		Use:   "search [NS...]",
		Short: "Search items under a namespace prefix, semantically with --query",
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || offset < 0 {
				return usagef("--limit must be >= 1 and --offset >= 0")
			}
			if err := store.Namespace(args).ValidatePrefix(); err != nil {
				return usageError{err}
			}
			opt := store.SearchOptions{Query: query, Limit: limit, Offset: offset}
			if filter != "" {
				v, err := jsonvalue.Unmarshal([]byte(filter))
				m, ok := v.(map[string]any)
				if err != nil || !ok {
					return usagef("--filter must be a JSON object")
				}
				opt.Filter = m
			}
			return withHandle(cmd.Context(), g, needStore(func(h *handle) error {
				res, err := h.Store.Search(cmd.Context(), store.Namespace(args), opt)
				if err != nil {
					return err
				}
				if g.json {
					enc := json.NewEncoder(cmd.OutOrStdout())
					for i := range res {
						if err := enc.Encode(itemJSON(&res[i].Item, res[i].Score)); err != nil {
							return err
						}
					}
					return nil
				}
				if len(res) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no items")
				}
				for _, r := range res {
					score := "     -"
					if r.Score != nil {
						score = fmt.Sprintf("%6.3f", *r.Score)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s  %s  %s\n", score, itemPath(r.Namespace, r.Key), clip(compactJSON(r.Value), 100))
				}
				return nil
			}))
		},
	}
	search.Flags().StringVar(&query, "query", "", "natural-language query (needs embeddings)")
	search.Flags().StringVar(&filter, "filter", "", `filter as JSON, e.g. '{"score":{"$gt":3}}'`)
	search.Flags().IntVar(&limit, "limit", store.DefaultSearchLimit, "at most this many items")
	search.Flags().IntVar(&offset, "offset", 0, "skip this many items")

	var prefix, suffix string
	var maxDepth, nsLimit, nsOffset int
	namespaces := &cobra.Command{
		Use:   "namespaces",
		Short: "List namespaces holding items",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxDepth < 0 || nsLimit < 1 || nsOffset < 0 {
				return usagef("--limit must be >= 1, --max-depth and --offset >= 0")
			}
			opt := store.ListNamespacesOptions{Prefix: splitNS(prefix), Suffix: splitNS(suffix), MaxDepth: maxDepth, Limit: nsLimit, Offset: nsOffset}
			return withHandle(cmd.Context(), g, needStore(func(h *handle) error {
				res, err := h.Store.ListNamespaces(cmd.Context(), opt)
				if err != nil {
					return err
				}
				if g.json {
					enc := json.NewEncoder(cmd.OutOrStdout())
					for _, ns := range res {
						if err := enc.Encode(map[string]any{"namespace": []string(ns)}); err != nil {
							return err
						}
					}
					return nil
				}
				for _, ns := range res {
					fmt.Fprintln(cmd.OutOrStdout(), nsPath(ns))
				}
				return nil
			}))
		},
	}
	namespaces.Flags().StringVar(&prefix, "prefix", "", "labels separated by '/', '*' matches one label (e.g. users/*)")
	namespaces.Flags().StringVar(&suffix, "suffix", "", "labels separated by '/', '*' matches one label")
	namespaces.Flags().IntVar(&maxDepth, "max-depth", 0, "truncate namespaces to this many labels")
	namespaces.Flags().IntVar(&nsLimit, "limit", store.DefaultListNamespacesLimit, "at most this many namespaces")
	namespaces.Flags().IntVar(&nsOffset, "offset", 0, "skip this many namespaces")

	var after string
	var listLimit int
	list := &cobra.Command{
		Use:   "list NS... [--after KEY] [--limit N]",
		Short: "List the items of one namespace in key order, a page at a time",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if listLimit < 1 {
				return usagef("--limit must be >= 1")
			}
			if err := store.Namespace(args).Validate(); err != nil {
				return usageError{err}
			}
			if after != "" {
				if err := store.ValidateKey(after); err != nil {
					return usageError{fmt.Errorf("--after: %w", err)}
				}
			}
			return withHandle(cmd.Context(), g, needStore(func(h *handle) error {
				l, ok := h.Store.(store.Lister)
				if !ok {
					return fmt.Errorf("this store (%T) cannot list items", h.Store)
				}
				items, err := l.ListItems(cmd.Context(), store.Namespace(args), store.ListItemsOptions{After: after, Limit: listLimit})
				if err != nil {
					return err
				}
				if g.json {
					enc := json.NewEncoder(cmd.OutOrStdout())
					for i := range items {
						if err := enc.Encode(itemJSON(&items[i], nil)); err != nil {
							return err
						}
					}
					return nil
				}
				for _, it := range items {
					fmt.Fprintf(cmd.OutOrStdout(), "%s  %s\n", printable(it.Key), clip(compactJSON(it.Value), 100))
				}
				page := listLimit
				if page == 0 {
					page = store.DefaultListItemsLimit
				}
				if len(items) < page {
					return nil // the last page
				}
				// A full page: another follows only if a key comes after
				// its last one.
				last := items[len(items)-1].Key
				more, err := l.ListItems(cmd.Context(), store.Namespace(args), store.ListItemsOptions{After: last, Limit: 1})
				if err != nil {
					return err
				}
				if len(more) > 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "next page: --after %s\n", shellQuote(last))
				}
				return nil
			}))
		},
	}
	list.Flags().StringVar(&after, "after", "", "list keys after this one (the last key of the previous page)")
	list.Flags().IntVar(&listLimit, "limit", store.DefaultListItemsLimit, "at most this many items")

	deletePrefix := &cobra.Command{
		Use:   "delete-prefix NS...",
		Short: "Delete every item of a namespace and of the namespaces under it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.Namespace(args).Validate(); err != nil {
				return usageError{err}
			}
			return withHandle(cmd.Context(), g, needStore(func(h *handle) error {
				d, ok := h.Store.(store.PrefixDeleter)
				if !ok {
					return fmt.Errorf("this store (%T) cannot delete a prefix", h.Store)
				}
				n, err := d.DeletePrefix(cmd.Context(), store.Namespace(args))
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"prefix": args, "deleted": n})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted %d items under %s\n", n, nsPath(store.Namespace(args)))
				return nil
			}))
		},
	}

	cmd.AddCommand(put, get, del, search, namespaces, list, deletePrefix, newReembedCmd(g))
	return cmd
}

// checkItem refuses, as a usage error (exit 2), a namespace or key given
// on the command line that no item can have: an empty one (an unset shell
// variable), a label with a '.', the reserved root "langgraph".
func checkItem(ns store.Namespace, key string, write bool) error {
	if err := ns.Validate(); err != nil {
		return usageError{err}
	}
	check := store.ValidateKey
	if write {
		check = store.ValidateStoredKey
		if err := ns.ValidateStored(); err != nil {
			return usageError{err}
		}
	}
	if err := check(key); err != nil {
		return usageError{err}
	}
	return nil
}

// nsPath is how human output prints a namespace: its labels joined with
// '/', the form --prefix and --suffix take (labels cannot hold a '.' but
// may hold a '/', so a label that does is printed Go-quoted). A label
// longer than store.MaxIDBytes (a lookup or delete takes one) is named by
// its length, as idName does, not printed.
func nsPath(ns store.Namespace) string {
	parts := make([]string, len(ns))
	for i, l := range ns {
		if len(l) > store.MaxIDBytes {
			parts[i] = "(" + checkpointer.NameID("label", l) + ")"
		} else if strings.Contains(l, "/") {
			parts[i] = strconv.Quote(l)
		} else {
			parts[i] = printable(l)
		}
	}
	return strings.Join(parts, "/")
}

// itemPath is how human output prints an item: its namespace (nsPath),
// then '/' and its key (named by its length beyond store.MaxIDBytes).
func itemPath(ns store.Namespace, key string) string {
	if len(key) > store.MaxIDBytes {
		return nsPath(ns) + "/(" + checkpointer.NameID("key", key) + ")"
	}
	return nsPath(ns) + "/" + printable(key)
}

func splitNS(s string) store.Namespace {
	if s == "" {
		return nil
	}
	return store.Namespace(strings.Split(s, "/"))
}

type itemDoc struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"` // values as jsonValue prints them
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
	Score     *float64       `json:"score,omitempty"`
}

func itemJSON(it *store.Item, score *float64) itemDoc {
	return itemDoc{
		Namespace: it.Namespace, Key: it.Key, Value: jsonValues(it.Value),
		CreatedAt: it.CreatedAt.UTC().Format(time.RFC3339Nano),
		UpdatedAt: it.UpdatedAt.UTC().Format(time.RFC3339Nano),
		Score:     score,
	}
}
