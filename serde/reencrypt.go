package serde

import "fmt"

// Reencrypt returns a stored value sealed under the primary key and the
// cipher e writes, and true, when it is not already (plaintext when
// plaintext reads are allowed, another cipher, or a previous key);
// otherwise the inputs unchanged and false. The payload is decrypted and
// sealed again without being decoded, so its inner format (msgpack from
// Python, json, ...) is kept byte for byte. aad is the row's associated
// data, used both to open the old value and to seal the new one. A value
// that does not decrypt is an error (ErrDecrypt): rotation never drops data.
func (e *Encrypted) Reencrypt(typ string, data, aad []byte) (string, []byte, bool, error) {
	if typ == TypeEmpty {
		return typ, data, false, nil
	}
	plain, innerTyp, id, err := e.open(typ, data, aad)
	if err != nil {
		return typ, data, false, err
	}
	if id != nil && typ == innerTyp+"+"+e.write.Name() && e.ring.IsPrimary(*id) {
		return typ, data, false, nil
	}
	cp := cipherAAD(e.write.Name(), innerTyp, aad)
	ct, err := e.write.Encrypt(plain, *cp)
	putScratch(cp)
	if err != nil {
		return typ, data, false, fmt.Errorf("serde: encrypt: %w", err)
	}
	return innerTyp + "+" + e.write.Name(), ct, true, nil
}
