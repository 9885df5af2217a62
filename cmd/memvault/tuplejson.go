package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/serde"
)

// errNotFound marks a missing thread, checkpoint or item (exit status 1,
// with a clear message).
var errNotFound = errors.New("not found")

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errNotFound}, args...)...)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// codec prints values as LangGraph's JSON serializer spells them.
var codec serde.JSONPlus

type configurable struct {
	ThreadID     string `json:"thread_id"`
	CheckpointNS string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
}

type configDoc struct {
	Configurable configurable `json:"configurable"`
}

func configJSON(c checkpointer.Config) configDoc {
	return configDoc{configurable{c.ThreadID, c.CheckpointNS, c.CheckpointID}}
}

type checkpointDoc struct {
	V               int                          `json:"v"`
	ID              string                       `json:"id"`
	TS              string                       `json:"ts"`
	ChannelValues   map[string]any               `json:"channel_values"`
	ChannelVersions map[string]string            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]string `json:"versions_seen"`
	UpdatedChannels []string                     `json:"updated_channels"`
}

// tupleDoc is LangGraph's CheckpointTuple as JSON: pending writes as
// [task_id, channel, value] triples.
type tupleDoc struct {
	Config        configDoc           `json:"config"`
	ParentConfig  *configDoc          `json:"parent_config"`
	Metadata      threadfile.Metadata `json:"metadata"`
	Checkpoint    checkpointDoc       `json:"checkpoint"`
	PendingWrites [][3]any            `json:"pending_writes"`
}

// jsonValue is how a stored value is printed: the JSON JsonPlus writes for
// it, so values JSON has no plain form for (a JS Map, a Python set, NaN,
// LangChain messages) print as LangGraph's lc constructor records, exactly
// as LangGraph's JSON serializer spells them; raw bytes print as base64.
func jsonValue(v any) any {
	typ, data, err := codec.DumpsTyped(v)
	if err != nil {
		return fmt.Sprintf("<unprintable %T: %v>", v, err)
	}
	if typ == serde.TypeJSON {
		return json.RawMessage(data)
	}
	return data // []byte: base64
}

func jsonValues(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonValue(v)
	}
	return out
}

func tupleJSON(t *checkpointer.Tuple) tupleDoc {
	d := tupleDoc{
		Config:        configJSON(t.Config),
		Metadata:      threadfile.Metadata(t.Metadata),
		PendingWrites: make([][3]any, 0, len(t.PendingWrites)),
	}
	if t.ParentConfig != nil {
		p := configJSON(*t.ParentConfig)
		d.ParentConfig = &p
	}
	if cp := t.Checkpoint; cp != nil {
		d.Checkpoint = checkpointDoc{
			V: cp.V, ID: cp.ID, TS: cp.TS.UTC().Format(checkpointer.TimeLayout),
			ChannelValues: jsonValues(cp.ChannelValues), ChannelVersions: cp.ChannelVersions,
			VersionsSeen: cp.VersionsSeen, UpdatedChannels: cp.UpdatedChannels,
		}
	}
	for _, w := range t.PendingWrites {
		d.PendingWrites = append(d.PendingWrites, [3]any{w.TaskID, w.Channel, jsonValue(w.Value)})
	}
	return d
}
