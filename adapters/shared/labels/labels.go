package labels

import (
	"fmt"
	"strings"
)

var escaper = strings.NewReplacer("%", "%25", ".", "%2E")

// Escape returns name as a namespace label.
func Escape(name string) string { return escaper.Replace(name) }

// Unescape reverses Escape; a label Escape cannot have made is an error.
func Unescape(label string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		switch label[i] {
		case '.':
			return "", fmt.Errorf("malformed namespace label %q", label)
		case '%':
		default:
			b.WriteByte(label[i])
			continue
		}
		switch {
		case strings.HasPrefix(label[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(label[i:], "%2E"):
			b.WriteByte('.')
		default:
			return "", fmt.Errorf("malformed namespace label %q", label)
		}
		i += 2
	}
	return b.String(), nil
}
