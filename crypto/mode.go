package crypto

import (
	"fmt"
)

// Mode is the AES mode used for LangGraph's "aes" format.
type Mode int

const (
	// ModeGCM is AES-GCM with a 16-byte nonce; Python reads it when
	// configured with mode=AES.MODE_GCM. It is the zero value.
	ModeGCM Mode = iota
	// ModeEAX is AES-EAX, pycryptodome's and therefore LangGraph's default.
	ModeEAX
)

// String returns "gcm" or "eax".
func (m Mode) String() string {
	switch m {
	case ModeGCM:
		return "gcm"
	case ModeEAX:
		return "eax"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}
