// Package keyaccess gates the raw bytes of a crypto.Key: crypto.Key's
// Material method takes a Token, which only code inside memvault can make
// (the package is internal), so memvault's own ciphers read a key's bytes
// and nothing outside the module can.
package keyaccess
