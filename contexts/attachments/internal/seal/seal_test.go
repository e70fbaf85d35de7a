package seal

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"testing"
)

func testObject(t *testing.T, size, partSize int64) ([]byte, []byte, Layout, *Object) {
	t.Helper()
	plain := make([]byte, size)
	_, _ = rand.Read(plain)
	key, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	obj, err := NewObject(key, "addr")
	if err != nil {
		t.Fatal(err)
	}
	l := Layout{Size: size, PartSize: partSize}
	var sealed []byte
	for p := int64(0); p < l.Parts(); p++ {
		write, err := NewWriteID()
		if err != nil {
			t.Fatal(err)
		}
		l.Writes = append(l.Writes, write)
		chunk := plain[min(size, p*partSize):min(size, (p+1)*partSize)]
		sealed = obj.SealPart(sealed, uint32(p+1), write, p == l.Parts()-1, chunk)
	}
	if int64(len(sealed)) != l.SealedSize() {
		t.Fatalf("sealed %d bytes, layout says %d", len(sealed), l.SealedSize())
	}
	return plain, sealed, l, obj
}

func fetcher(sealed []byte) Fetch {
	return func(off, n int64) ([]byte, error) { return sealed[off : off+n], nil }
}

func TestRoundTripAndRanges(t *testing.T) {
	for _, size := range []int64{0, 1, SegmentSize - 1, SegmentSize, 3*SegmentSize + 17, 4 * SegmentSize, 40*SegmentSize + 5} {
		plain, sealed, l, obj := testObject(t, size, 4*SegmentSize)
		r, err := NewReader(obj, l, fetcher(sealed))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("size %d: round trip failed: %v", size, err)
		}
		if size < 10 {
			continue
		}
		for _, rg := range [][2]int64{{0, 1}, {size - 1, 1}, {SegmentSize - 3, 7}, {size / 2, size / 3}} {
			if rg[0]+rg[1] > size {
				continue
			}
			if _, err := r.Seek(rg[0], io.SeekStart); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, rg[1])
			if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, plain[rg[0]:rg[0]+rg[1]]) {
				t.Fatalf("size %d range %v: %v", size, rg, err)
			}
		}
	}
}

func TestTamperingIsDetected(t *testing.T) {
	_, sealed, l, obj := testObject(t, 3*SegmentSize+100, 2*SegmentSize)
	read := func(s []byte, l Layout) error {
		r, err := NewReader(obj, l, fetcher(s))
		if err != nil {
			return err
		}
		_, err = io.ReadAll(r)
		return err
	}
	flipped := bytes.Clone(sealed)
	flipped[SegmentSize+Overhead+5] ^= 1
	if err := read(flipped, l); !errors.Is(err, ErrOpen) {
		t.Fatalf("flipped bit: %v", err)
	}
	// Swapping the two parts' first segments breaks their AAD.
	swapped := bytes.Clone(sealed)
	seg := SegmentSize + Overhead
	copy(swapped[:seg], sealed[2*seg:3*seg])
	copy(swapped[2*seg:3*seg], sealed[:seg])
	if err := read(swapped, l); !errors.Is(err, ErrOpen) {
		t.Fatalf("swapped parts: %v", err)
	}
	// Truncating to whole segments: the new last one lacks the last flag.
	short := l
	short.Size = 3 * SegmentSize
	if err := read(sealed[:3*seg], short); !errors.Is(err, ErrOpen) {
		t.Fatalf("truncated: %v", err)
	}
	// Another write's id (a stale part) does not open either.
	stale := l
	stale.Writes = []uint64{l.Writes[0], l.Writes[1] + 1}
	if err := read(sealed, stale); !errors.Is(err, ErrOpen) {
		t.Fatalf("wrong write id: %v", err)
	}
}

func TestKeysWrapAndAddress(t *testing.T) {
	master := make([]byte, 32)
	_, _ = rand.Read(master)
	k, err := NewKeys(Secrets{Master: master})
	if err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256([]byte("hello"))
	a1, a2 := k.Address("ten_a", d), k.Address("ten_b", d)
	if a1 == a2 || a1 != k.Address("ten_a", d) || len(a1) != 64 {
		t.Fatalf("addresses %s %s: per tenant, stable, hex", a1, a2)
	}
	if bytes.Contains([]byte(a1), []byte(hexOf(d))) {
		t.Fatal("address reveals the digest")
	}
	dk, _ := NewDataKey()
	w, err := k.Wrap(dk, "ten_a", a1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k.Unwrap(w, "ten_a", a1); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("unwrap: %v", err)
	}
	if _, err := k.Unwrap(w, "ten_b", a1); !errors.Is(err, ErrOpen) {
		t.Fatal("a key wrapped for one tenant opened for another")
	}
	other, _ := NewKeys(Secrets{Master: make([]byte, 32)})
	if _, err := other.Unwrap(w, "ten_a", a1); !errors.Is(err, ErrOpen) {
		t.Fatal("another master key unwrapped the data key")
	}
	if _, err := NewKeys(Secrets{Master: master[:16]}); err == nil {
		t.Fatal("a short master key was accepted")
	}
}

// A rotation: the new master wraps, the old one still unwraps until a
// rewrap moves each data key, and addresses stay where they were.
func TestKeysRotation(t *testing.T) {
	oldMaster, newMaster := make([]byte, 32), make([]byte, 32)
	_, _ = rand.Read(oldMaster)
	_, _ = rand.Read(newMaster)
	before, _ := NewKeys(Secrets{Master: oldMaster})
	addrKey, err := AddressKey(oldMaster)
	if err != nil {
		t.Fatal(err)
	}
	during, err := NewKeys(Secrets{Master: newMaster, Previous: [][]byte{oldMaster}, Address: addrKey})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := NewKeys(Secrets{Master: newMaster, Address: addrKey})
	d := sha256.Sum256([]byte("hello"))
	addr := before.Address("ten_a", d)
	if during.Address("ten_a", d) != addr || after.Address("ten_a", d) != addr {
		t.Fatal("the address changed with the master key")
	}
	dk, _ := NewDataKey()
	old, _ := before.Wrap(dk, "ten_a", addr)
	if got, err := during.Unwrap(old, "ten_a", addr); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("a previous master's data key did not unwrap: %v", err)
	}
	if _, err := after.Unwrap(old, "ten_a", addr); !errors.Is(err, ErrOpen) {
		t.Fatal("a retired master's data key opened without it")
	}
	moved, err := during.Rewrap(old, "ten_a", addr)
	if err != nil || moved == nil {
		t.Fatalf("rewrap: %v", err)
	}
	if got, err := after.Unwrap(moved, "ten_a", addr); err != nil || !bytes.Equal(got, dk) {
		t.Fatalf("a rewrapped key did not open under the new master alone: %v", err)
	}
	if again, err := during.Rewrap(moved, "ten_a", addr); err != nil || again != nil {
		t.Fatalf("rewrap of a current key: %x, %v", again, err)
	}
	if _, err := after.Rewrap(old, "ten_a", addr); !errors.Is(err, ErrOpen) {
		t.Fatalf("rewrap without the key that opens it: %v", err)
	}
	if _, err := during.Rewrap(moved, "ten_b", addr); !errors.Is(err, ErrOpen) {
		t.Fatalf("rewrap for another tenant: %v", err)
	}
	for _, bad := range []Secrets{
		{Master: newMaster, Previous: [][]byte{oldMaster[:31]}},
		{Master: newMaster, Address: addrKey[:16]},
		{Master: newMaster, Address: newMaster},
		{Master: newMaster, Previous: [][]byte{oldMaster}, Address: oldMaster},
		{Master: nil},
	} {
		if _, err := NewKeys(bad); err == nil {
			t.Fatalf("accepted %d-byte previous/%d-byte address", len(bad.Previous), len(bad.Address))
		}
	}
}

func hexOf(d [32]byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 64)
	for i, b := range d {
		out[2*i], out[2*i+1] = digits[b>>4], digits[b&15]
	}
	return string(out)
}

func BenchmarkSealPart(b *testing.B) {
	key, _ := NewDataKey()
	obj, _ := NewObject(key, "addr")
	plain := make([]byte, 8<<20)
	dst := make([]byte, 0, SealedLen(int64(len(plain))))
	b.SetBytes(int64(len(plain)))
	for i := 0; b.Loop(); i++ {
		dst = obj.SealPart(dst[:0], 1, uint64(i), false, plain)
	}
}
