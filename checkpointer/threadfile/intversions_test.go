package threadfile

import (
	"testing"
)

func TestIntVersionsKeepOrderAndForks(t *testing.T) {
	v := func(n, frac string) string { return "000000000000000000000000000000" + n + "." + frac }
	lines := []Line{
		{ThreadID: "t", CheckpointID: "1", ChannelVersions: map[string]string{"a": v("01", "0.5"), "b": "7"}},
		{ThreadID: "t", CheckpointID: "2", ChannelVersions: map[string]string{"a": v("02", "0.9")}, VersionsSeen: map[string]map[string]string{"n": {"a": v("01", "0.5")}}},
		// A fork of checkpoint 1: same integer part as checkpoint 2, another fraction.
		{ThreadID: "t", CheckpointID: "3", ChannelVersions: map[string]string{"a": v("02", "0.1")}},
		{ThreadID: "t", CheckpointID: "4", ChannelVersions: map[string]string{"a": v("10", "0.3")}},
		{ThreadID: "u", CheckpointID: "1", ChannelVersions: map[string]string{"a": v("05", "0.2")}},
	}
	intVersions(lines)
	got := []string{lines[0].ChannelVersions["a"], lines[1].ChannelVersions["a"], lines[2].ChannelVersions["a"], lines[3].ChannelVersions["a"], lines[4].ChannelVersions["a"]}
	want := []string{"1", "3", "2", "4", "1"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("renumbered a = %v, want %v", got, want)
		}
	}
	if lines[0].ChannelVersions["b"] != "7" {
		t.Fatalf("integer versions must stay as they are, got %q", lines[0].ChannelVersions["b"])
	}
	if lines[1].VersionsSeen["n"]["a"] != "1" {
		t.Fatalf("versions_seen not renumbered: %v", lines[1].VersionsSeen)
	}
}
