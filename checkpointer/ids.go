package checkpointer

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

// gregorianOffset is the number of 100-ns intervals between 1582-10-15 (the
// UUID epoch) and 1970-01-01.
const gregorianOffset = 0x01B21DD213814000

var (
	idMu   sync.Mutex
	lastTS uint64
)

// NewID returns a checkpoint id as LangGraph makes it: a UUIDv6 whose 60-bit
// timestamp is strictly increasing within this process, whose clock_seq is
// step&0x3FFF (so the fourth group reads 8000|step; step -1 gives 0x3FFF),
// and whose node is 48 random bits. Ids of one process therefore sort by
// creation time as text.
func NewID(step int) string {
	return newIDAt(time.Now(), step)
}

func newIDAt(now time.Time, step int) string {
	ts := uint64(now.UnixNano()/100) + gregorianOffset
	idMu.Lock()
	if ts <= lastTS {
		ts = lastTS + 1
	}
	lastTS = ts
	idMu.Unlock()

	var u [16]byte
	hi := (ts >> 12) & 0xFFFFFFFFFFFF // time_high and time_mid
	binary.BigEndian.PutUint64(u[0:8], hi<<16|0x6000|(ts&0x0FFF))
	seq := uint16(step) & 0x3FFF
	binary.BigEndian.PutUint16(u[8:10], 0x8000|seq)
	_, _ = rand.Read(u[10:16]) // crypto/rand.Read never fails (Go 1.24+)

	return formatUUID(u)
}

// formatUUID spells u in the canonical lowercase 8-4-4-4-12 form.
func formatUUID(u [16]byte) string {
	var out [36]byte
	hex.Encode(out[0:8], u[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], u[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], u[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], u[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], u[10:16])
	return string(out[:])
}

// IDTime returns the time embedded in a UUIDv6 checkpoint id, and false when
// id is not a UUIDv6.
func IDTime(id string) (time.Time, bool) {
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' || id[14] != '6' {
		return time.Time{}, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[0:4], []byte(id[0:8])); err != nil {
		return time.Time{}, false
	}
	if _, err := hex.Decode(b[4:6], []byte(id[9:13])); err != nil {
		return time.Time{}, false
	}
	if _, err := hex.Decode(b[6:8], []byte(id[14:18])); err != nil {
		return time.Time{}, false
	}
	v := binary.BigEndian.Uint64(b[:])
	ts := (v>>16)<<12 | v&0x0FFF
	if ts < gregorianOffset {
		return time.Time{}, false
	}
	ticks := ts - gregorianOffset // 100-ns ticks since 1970; * 100 may overflow int64
	return time.Unix(int64(ticks/1e7), int64(ticks%1e7)*100).UTC(), true
}
