// Package pyvalue holds the Go types of the values of Python (and
// JavaScript) LangGraph that have no native Go equivalent, or whose origin
// must be kept so that they are written back unchanged: a UUID, a Decimal,
// a set, a LangChain constructor record, a Python object read from
// msgpack, a numpy array, LangGraph's delta snapshot and unknown msgpack
// extensions.
//
// serde's codecs (JSONPlus, MsgPack) decode into these types and encode
// them back to the form they came from, so a checkpoint Python wrote is
// read by Go and written back as Python reads it. The package has no
// codec of its own: it is the vocabulary the codecs share with their
// callers.
package pyvalue
