package core

import (
	"fmt"
	"strings"

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
	b, err := jsonvalue.Marshal(map[string]any(SerializableMetadata(cfg, md)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", checkpointer.ErrInvalidMetadata, err)
	}
	return b, nil
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
