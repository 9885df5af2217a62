// Package carve is a test helper: it searches the raw bytes of database
// files for envelopes sealed under one master key, as whoever copies the
// files and holds that (retired) key would — a forensic carve of a SQLite
// file and its write-ahead log, live pages, free pages and the unallocated
// gaps of pages alike. Tests of re-encryption use it to show that no image
// of a value under the old key survives in the file.
package carve
