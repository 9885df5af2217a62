package core

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/serde"

	"github.com/memvault/memvault/jsonvalue"
)

// EncodeMetadata returns the JSON every backend stores for a checkpoint's
// metadata: SerializableMetadata written by jsonvalue.Marshal, so that each
// value reads back with the same Go type from every backend (int64, a
// float64 that stays a float64 even when integral, exact big integers). A
// value JSON cannot hold fails with ErrInvalidMetadata.
func EncodeMetadata(cfg checkpointer.Config, md checkpointer.Metadata) ([]byte, error) {
	m := map[string]any(md)
	if !storedAsIs(cfg, md) {
		m = map[string]any(SerializableMetadata(cfg, md))
	}
	// Written in a reused buffer and copied out at its final size: one
	// allocation instead of one per doubling of a growing slice.
	bp := metaScratch.Get().(*[]byte)
	defer metaScratch.Put(bp)
	b, err := jsonvalue.Append((*bp)[:0], m)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", checkpointer.ErrInvalidMetadata, err)
	}
	if jsonDeeperThan(b, checkpointer.MaxMetadataDepth) {
		return nil, fmt.Errorf("%w: nested deeper than %d levels (checkpointer.MaxMetadataDepth)", checkpointer.ErrInvalidMetadata, checkpointer.MaxMetadataDepth)
	}
	if cap(b) <= 16<<10 {
		*bp = b
	}
	return bytes.Clone(b), nil
}

// metaScratch holds the buffers EncodeMetadata writes in.
var metaScratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// storedAsIs reports whether md is its own SerializableMetadata, so that
// encoding it needs no copy (most puts: the copy — a map per map in md, a
// boxed string per string — made half of the metadata's allocations): md is
// not nil and has no "writes", cfg adds nothing to it, and no key or
// string in it holds a NUL character, nor is a map in it a
// checkpointer.Metadata (which the copy turns into a map[string]any).
func storedAsIs(cfg checkpointer.Config, md checkpointer.Metadata) bool {
	if md == nil {
		return false
	}
	if _, ok := md["writes"]; ok {
		return false
	}
	for _, src := range []map[string]any{cfg.Metadata, cfg.Extra} {
		for k, v := range src {
			if _, ok := md[k]; ok || k == "writes" || strings.HasPrefix(k, "__") || excludedMetadataKeys[k] {
				continue
			}
			switch v.(type) {
			case string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
				return false // merged
			}
		}
	}
	for k, v := range md {
		if strings.IndexByte(k, 0) >= 0 || !noNUL(v, 1) {
			return false
		}
	}
	return true
}

// noNUL reports whether stripNULAt(v, depth) would return v as it is,
// an equal value of the same type: no key or string in v holds a NUL and
// no map in it is a checkpointer.Metadata. Below serde.MaxDepth it reports
// false, leaving a cycle to the copy's own handling.
func noNUL(v any, depth int) bool {
	if depth > serde.MaxDepth {
		return false
	}
	depth++
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) < 0
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || !noNUL(e, depth) {
				return false
			}
		}
	case checkpointer.Metadata:
		return false
	case []any:
		for _, e := range x {
			if !noNUL(e, depth) {
				return false
			}
		}
	case []string:
		for _, e := range x {
			if strings.IndexByte(e, 0) >= 0 {
				return false
			}
		}
	}
	return true
}

// excludedMetadataKeys are configurable keys never copied into metadata
// (LangGraph's EXCLUDED_METADATA_KEYS).
var excludedMetadataKeys = map[string]bool{
	"thread_id": true, "checkpoint_id": true, "checkpoint_ns": true,
	"checkpoint_map": true, "langgraph_step": true, "langgraph_node": true,
	"langgraph_triggers": true, "langgraph_path": true, "langgraph_checkpoint_ns": true,
}

// SerializableMetadata returns the metadata as it is stored: a copy of md
// without "writes" (nor one merged from cfg, as LangGraph drops it after
// merging), with NUL characters removed from strings (PostgreSQL
// JSONB cannot hold them; LangGraph strips them at the top level, memvault at
// every depth and in keys), and with the scalar (string, bool, integer,
// float) entries of cfg.Metadata and cfg.Extra added when md lacks them and
// their keys neither start with "__" nor are excluded.
func SerializableMetadata(cfg checkpointer.Config, md checkpointer.Metadata) checkpointer.Metadata {
	out := make(checkpointer.Metadata, len(md)+len(cfg.Metadata)+len(cfg.Extra))
	for k, v := range md {
		if k == "writes" {
			continue
		}
		out[stripNUL(k)] = stripNULDeep(v)
	}
	merge := func(src map[string]any) {
		for k, v := range src {
			if k == "writes" || strings.HasPrefix(k, "__") || excludedMetadataKeys[k] {
				continue
			}
			if _, ok := out[k]; ok {
				continue
			}
			switch v.(type) {
			case string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
				out[stripNUL(k)] = stripNULDeep(v)
			}
		}
	}
	merge(cfg.Metadata)
	merge(cfg.Extra)
	return out
}

func stripNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "")
}

func stripNULDeep(v any) any { return stripNULAt(v, 0) }

// stripNULAt is stripNULDeep at nesting depth: below serde.MaxDepth (a
// cycle) it returns v as it is, and encoding the metadata then fails with
// serde.ErrUnsupportedValue instead of the recursion exhausting the stack.
func stripNULAt(v any, depth int) any {
	if depth > serde.MaxDepth {
		return v
	}
	depth++
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) < 0 {
			return v // not boxed again
		}
		return stripNUL(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[stripNUL(k)] = stripNULAt(e, depth)
		}
		return m
	case checkpointer.Metadata:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[stripNUL(k)] = stripNULAt(e, depth)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = stripNULAt(e, depth)
		}
		return s
	case []string:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = stripNUL(e)
		}
		return s
	}
	return v
}

// jsonDeeperThan reports whether the JSON text b nests objects and arrays
// deeper than limit levels. It scans the bytes once, skipping strings, so
// that the check costs no allocation and no second walk of the value.
func jsonDeeperThan(b []byte, limit int) bool {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
