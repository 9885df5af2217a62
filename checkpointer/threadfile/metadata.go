package threadfile

import (
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/jsonvalue"
)

// Metadata is checkpoint metadata written and read in memvault's JSON value
// model (package jsonvalue), so that through a file 5.0 stays a float and
// integers beyond 2^53 stay exact.
type Metadata checkpointer.Metadata

// MarshalJSON writes the metadata with jsonvalue.Marshal.
func (m Metadata) MarshalJSON() ([]byte, error) {
	return jsonvalue.Marshal(map[string]any(m))
}

// UnmarshalJSON reads the metadata with jsonvalue.Unmarshal.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	v, err := jsonvalue.Unmarshal(b)
	if err != nil {
		return err
	}
	if v == nil {
		*m = nil
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("metadata is %T, not a JSON object", v)
	}
	*m = obj
	return nil
}
