// Package pkcs11 is a keys.Provider whose key-encryption key lives in a
// hardware security module, reached through PKCS#11 (tested against
// SoftHSM2): an AES-256 key generated inside the token, sensitive and not
// extractable, wraps memvault's data keys with CKM_AES_GCM and associated
// data. The key never leaves the token; memvault sees only wrapped data
// keys.
//
// An existing key under the label is used only if it is such a key: Open
// refuses (ErrUnfitKey) one that is not AES-256, is extractable or not
// sensitive (or ever was: imported, or once extractable), is usable
// without logging in, or is usable for anything but C_Encrypt and
// C_Decrypt, and says how to make a fit one. Options.RestrictKey clears
// unneeded uses; Options.InsecureUnwrapOnly opens an unfit key just to
// move its data keys off it.
//
// PKCS#11 needs cgo, so this provider is a module of its own and
// memvault's core stays pure Go. Give the provider to keys.New (or to
// config.Config.KEKProviders) as the first Provider; keep the environment
// provider after it while `keys rotate-kek` moves existing data keys under
// the HSM's KEK.
package pkcs11
