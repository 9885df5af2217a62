// Package vaulttest holds checks of vault.Open that every backend must
// pass, for the tests of backends registered from other modules
// (vault.RegisterBackend: MongoDB, Redis), which cannot reach vault's own
// tests.
package vaulttest
