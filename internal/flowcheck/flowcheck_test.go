package flowcheck

import (
	"testing"
	"time"
)

func at(ms int) time.Time { return time.UnixMilli(int64(ms)).UTC() }

func TestOverlaps_EndBeforeStartAtEqualTimes(t *testing.T) {
	runs := []Run{
		{Item: "a", Key: "k", Start: at(0), End: at(10)},
		{Item: "b", Key: "k", Start: at(10), End: at(20)}, // handed on at once
		{Item: "c", Key: "k", Start: at(5), End: at(15)},
		{Item: "d", Key: "j", Start: at(0), End: at(1)},
	}
	got := Overlaps(runs)
	if len(got) != 2 || got[0].Key != "j" || got[0].N != 1 || got[1].Key != "k" || got[1].N != 2 || !got[1].At.Equal(at(5)) {
		t.Fatalf("Overlaps = %+v, want j:1 and k:2 at 5 ms", got)
	}
}

func TestWindows_CountsHalfOpenWindows(t *testing.T) {
	var runs []Run
	for _, ms := range []int{0, 400, 999, 1000, 1200, 1300} {
		runs = append(runs, Run{Key: "k", Start: at(ms)})
	}
	got := Windows(runs, time.Second)
	// [0, 1000) holds 3; [400, 1400) holds 5.
	if len(got) != 1 || got[0].N != 5 || !got[0].From.Equal(at(400)) {
		t.Fatalf("Windows = %+v, want 5 from 400 ms", got)
	}
}

func TestEndOf_FirstEndAfterStart(t *testing.T) {
	ends := []time.Time{at(5), at(30), at(20)}
	if e, ok := EndOf(at(10), ends); !ok || !e.Equal(at(20)) {
		t.Fatalf("EndOf = %v %v, want 20 ms", e, ok)
	}
	if _, ok := EndOf(at(31), ends); ok {
		t.Fatal("EndOf found an end before the start")
	}
}
