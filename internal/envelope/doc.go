// Package envelope is the one form in which a serializer's output (an
// encrypted store value) is kept in a JSON column:
// {"__memvault_enc__": 1, "t": "<type tag>", "d": "<base64 payload>"}.
// Every SQL store writes it, so a value written by one backend reads in
// another; Parse tells such a value from a plain JSON object.
package envelope
