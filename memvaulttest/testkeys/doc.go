// Package testkeys gives tests a fixed key, the encrypting serializer
// built on it and a check that files hold no plaintext, so that tests
// across memvault's modules (the adapters and examples included) encrypt
// and check the same way without each spelling it again. The key is
// public: never use it outside tests.
//
// It is one of memvault's test kits (see package memvaulttest): for
// tests only.
package testkeys
