package idlimit

// MaxBytes is the longest identifier, in bytes of UTF-8 (a multi-byte
// character counts as its bytes, not as one).
const MaxBytes = 512
