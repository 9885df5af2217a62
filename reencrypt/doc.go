// Package reencrypt holds what a re-encryption run (the last step of a key
// rotation) takes and reports, shared by both contracts: Options tunes a
// run, Stats reports it and ErrCompactPending says a run resealed every row
// but could not yet remove the old images from the database file.
//
// It sits below package checkpointer and package store, whose Reencrypter
// interfaces take and return these types, so that neither contract imports
// the other (the store used to import checkpointer for them alone).
package reencrypt
