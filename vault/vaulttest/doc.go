// Package vaulttest holds checks of vault.Open that every backend must
// pass, for the tests of backends registered from other modules
// (vault.RegisterBackend: MongoDB, Redis), which cannot reach vault's own
// tests. Each check has a testing form (StoreOnlyKeyCheck) and one that
// returns an error (CheckStoreOnlyKey), which the built-in backends run in
// this package's example.
package vaulttest
