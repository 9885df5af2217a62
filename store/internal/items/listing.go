package items

import (
	"github.com/memvault/memvault/store"
)

// CheckListItems validates ListItems' arguments (the namespace and the
// options) and returns the namespace as stored and the page size: what
// every backend does first.
func CheckListItems(ns store.Namespace, opt store.ListItemsOptions) (prefix string, limit int, err error) {
	if err := ns.Validate(); err != nil {
		return "", 0, err
	}
	if err := opt.Validate(); err != nil {
		return "", 0, err
	}
	return ns.String(), opt.EffectiveLimit(), nil
}

// ValidateDeletePrefix checks DeletePrefix's argument: a valid namespace,
// which is never empty.
func ValidateDeletePrefix(prefix store.Namespace) error { return prefix.Validate() }
