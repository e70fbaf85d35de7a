package seal

import (
	"errors"
	"fmt"
	"io"
)

// Layout is how an object's plaintext maps onto its sealed bytes: Size
// plaintext bytes in parts of PartSize (a multiple of SegmentSize; the
// last part is shorter), each part sealed under its write's id.
type Layout struct {
	Size     int64
	PartSize int64
	Writes   []uint64 // per part, in order
}

// Validate checks the layout is one this package writes.
func (l Layout) Validate() error {
	if l.PartSize <= 0 || l.PartSize%SegmentSize != 0 {
		return fmt.Errorf("seal: part size %d is not a positive multiple of %d", l.PartSize, SegmentSize)
	}
	if l.Size < 0 || int64(len(l.Writes)) != l.Parts() {
		return fmt.Errorf("seal: %d bytes in parts of %d need %d write ids, have %d", l.Size, l.PartSize, l.Parts(), len(l.Writes))
	}
	return nil
}

// Parts is how many parts the object has (at least one).
func (l Layout) Parts() int64 { return max(1, (l.Size+l.PartSize-1)/l.PartSize) }

// SealedSize is the object's stored length.
func (l Layout) SealedSize() int64 { return SealedLen(l.Size) }

// segment locates global segment g: its part (1-based), index within the
// part, sealed offset and length, and whether it is the object's last.
func (l Layout) segment(g int64) (part uint32, seg uint32, off, n int64, last bool) {
	perPart := l.PartSize / SegmentSize
	total := Segments(l.Size)
	part = uint32(g/perPart) + 1
	seg = uint32(g % perPart)
	off = g * (SegmentSize + Overhead)
	plain := int64(SegmentSize)
	if g == total-1 {
		plain = l.Size - g*SegmentSize
	}
	return part, seg, off, plain + Overhead, g == total-1
}

// Fetch returns n sealed bytes at off.
type Fetch func(off, n int64) ([]byte, error)

// Reader decrypts an object as an io.ReadSeeker (what http.ServeContent
// needs for range requests), fetching up to 16 segments (1 MiB) at a time.
type Reader struct {
	obj    *Object
	layout Layout
	fetch  Fetch
	pos    int64
	win    []byte // plaintext of segments [winSeg, winSeg+k)
	winOff int64  // plaintext offset of win[0]
}

const window = 16

// NewReader returns a reader over a sealed object.
func NewReader(obj *Object, layout Layout, fetch Fetch) (*Reader, error) {
	if err := layout.Validate(); err != nil {
		return nil, err
	}
	return &Reader{obj: obj, layout: layout, fetch: fetch}, nil
}

// Prime loads the first window, so a store or key failure surfaces before
// anything is sent to a client.
func (r *Reader) Prime() error {
	if r.layout.Size == 0 {
		return nil
	}
	return r.load(0)
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.pos >= r.layout.Size {
		return 0, io.EOF
	}
	if r.pos < r.winOff || r.pos >= r.winOff+int64(len(r.win)) {
		if err := r.load(r.pos / SegmentSize); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.win[r.pos-r.winOff:])
	r.pos += int64(n)
	return n, nil
}

// load decrypts the window starting at global segment g.
func (r *Reader) load(g int64) error {
	total := Segments(r.layout.Size)
	end := min(total, g+window)
	_, _, first, _, _ := r.layout.segment(g)
	_, _, lastOff, lastLen, _ := r.layout.segment(end - 1)
	sealed, err := r.fetch(first, lastOff+lastLen-first)
	if err != nil {
		return err
	}
	if int64(len(sealed)) != lastOff+lastLen-first {
		return fmt.Errorf("seal: store returned %d bytes, want %d: %w", len(sealed), lastOff+lastLen-first, io.ErrUnexpectedEOF)
	}
	r.win = r.win[:0]
	for s := g; s < end; s++ {
		part, seg, off, n, last := r.layout.segment(s)
		r.win, err = r.obj.OpenSegment(r.win, part, r.layout.Writes[part-1], seg, last, sealed[off-first:off-first+n])
		if err != nil {
			return fmt.Errorf("segment %d: %w", s, err)
		}
	}
	r.winOff = g * SegmentSize
	return nil
}

// Seek implements io.Seeker.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.layout.Size
	default:
		return r.pos, errors.New("seal: bad whence")
	}
	if offset < 0 {
		return r.pos, errors.New("seal: negative position")
	}
	r.pos = offset
	return offset, nil
}

// ReadAt implements io.ReaderAt (for extractors); it moves the read
// position, so it is not for concurrent use.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if _, err := r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(r, p)
}
