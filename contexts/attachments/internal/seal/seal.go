// Package seal is the attachments context's encryption format and content
// addressing. It imports the standard library (and x/crypto's HKDF) only.
//
// Every stored object has its own random 256-bit data key, wrapped by a
// key-encryption key derived from the deployment's master key. The
// plaintext is cut into parts (the upload's parts) and each part into
// 64 KiB segments; each segment is sealed with AES-256-GCM on its own:
//
//	nonce = write id (uint64, big-endian) ‖ segment index within the part (uint32)
//	AAD   = "oml/seg/v1" ‖ address ‖ part number (uint32) ‖ segment index (uint32) ‖ last (1 byte)
//
// The write id is drawn at random for every write of a part, so no (key,
// nonce) pair seals two plaintexts — not when a client sends a part again
// with other bytes, and not when the database that records the parts is
// restored to an earlier point (a counter there could repeat). Two writes
// collide with probability 2⁻⁶⁴; an object has at most 10,000 parts. The
// part number in the AAD pins a segment to its place; the last flag marks
// the object's final segment, so a truncated object does not decrypt. A sealed part is
// its segments' ciphertexts back to back: plaintext length plus 16 bytes
// per segment.
//
// Objects are addressed per tenant by HMAC-SHA256 of the plaintext's
// SHA-256 under a key derived from the master key: equal content in one
// tenant lands on one address, and the store learns neither the file name
// nor the digest.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// SegmentSize is the plaintext length of every segment but an object's
// last; Overhead is what sealing adds to each.
const (
	SegmentSize = 64 << 10
	Overhead    = 16
	keySize     = 32
	nonceSize   = 12
)

// ErrOpen is returned for a segment or a wrapped key that does not
// authenticate: wrong key, tampered or misplaced bytes.
var ErrOpen = errors.New("seal: ciphertext does not authenticate")

// Keys are the keys derived from the master key.
type Keys struct {
	kek     cipher.AEAD
	address []byte
}

// NewKeys derives the key-encryption key and the address key from the
// deployment's 32-byte master key.
func NewKeys(master []byte) (*Keys, error) {
	if len(master) != keySize {
		return nil, fmt.Errorf("seal: master key must be %d bytes, got %d", keySize, len(master))
	}
	kek, err := hkdf.Key(sha256.New, master, nil, "oml/kek/v1", keySize)
	if err != nil {
		return nil, err
	}
	addr, err := hkdf.Key(sha256.New, master, nil, "oml/address/v1", keySize)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(kek)
	if err != nil {
		return nil, err
	}
	return &Keys{kek: aead, address: addr}, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Address is the content address of a plaintext digest in a tenant (hex).
func (k *Keys) Address(tenant string, digest [32]byte) string {
	m := hmac.New(sha256.New, k.address)
	m.Write([]byte(tenant))
	m.Write([]byte{0})
	m.Write(digest[:])
	return hex.EncodeToString(m.Sum(nil))
}

// NewDataKey returns a fresh random data key.
func NewDataKey() ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return key, nil
}

func wrapAAD(tenant, address string) []byte {
	return []byte("oml/dk/v1\x00" + tenant + "\x00" + address)
}

// Wrap seals a data key for one tenant's address: nonce ‖ ciphertext.
func (k *Keys) Wrap(dataKey []byte, tenant, address string) ([]byte, error) {
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return k.kek.Seal(nonce, nonce, dataKey, wrapAAD(tenant, address)), nil
}

// Unwrap opens a wrapped data key.
func (k *Keys) Unwrap(wrapped []byte, tenant, address string) ([]byte, error) {
	if len(wrapped) < nonceSize {
		return nil, ErrOpen
	}
	key, err := k.kek.Open(nil, wrapped[:nonceSize], wrapped[nonceSize:], wrapAAD(tenant, address))
	if err != nil || len(key) != keySize {
		return nil, ErrOpen
	}
	return key, nil
}

// Segments is how many segments n plaintext bytes make (an empty object
// still has one, empty, segment).
func Segments(n int64) int64 {
	if n <= 0 {
		return 1
	}
	return (n + SegmentSize - 1) / SegmentSize
}

// SealedLen is the length of n plaintext bytes once sealed.
func SealedLen(n int64) int64 { return n + Segments(n)*Overhead }

// Object seals and opens one object's segments.
type Object struct {
	aead    cipher.AEAD
	address string
}

// NewObject returns the sealer for an object under its data key.
func NewObject(dataKey []byte, address string) (*Object, error) {
	if len(dataKey) != keySize {
		return nil, fmt.Errorf("seal: data key must be %d bytes", keySize)
	}
	aead, err := newAEAD(dataKey)
	if err != nil {
		return nil, err
	}
	return &Object{aead: aead, address: address}, nil
}

// NewWriteID draws the random id one write of a part seals under.
func NewWriteID() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b[:]), nil
}

func (o *Object) params(part uint32, write uint64, seg uint32, last bool) (nonce, aad []byte) {
	nonce = make([]byte, nonceSize)
	binary.BigEndian.PutUint64(nonce, write)
	binary.BigEndian.PutUint32(nonce[8:], seg)
	aad = make([]byte, 0, 12+len(o.address)+9)
	aad = append(aad, "oml/seg/v1\x00"...)
	aad = append(aad, o.address...)
	aad = binary.BigEndian.AppendUint32(aad, part)
	aad = binary.BigEndian.AppendUint32(aad, seg)
	if last {
		aad = append(aad, 1)
	} else {
		aad = append(aad, 0)
	}
	return nonce, aad
}

// SealPart appends the sealed form of one part's plaintext to dst. last
// says whether the part is the object's last; write is the write's id
// (NewWriteID).
func (o *Object) SealPart(dst []byte, part uint32, write uint64, last bool, plain []byte) []byte {
	n := Segments(int64(len(plain)))
	for s := int64(0); s < n; s++ {
		seg := plain[min(int64(len(plain)), s*SegmentSize):min(int64(len(plain)), (s+1)*SegmentSize)]
		dst = o.SealSegment(dst, part, write, uint32(s), last && s == n-1, seg)
	}
	return dst
}

// SealSegment appends one sealed segment to dst: segment seg of part,
// whose plaintext is at most SegmentSize bytes (only the object's last
// segment may be shorter).
func (o *Object) SealSegment(dst []byte, part uint32, write uint64, seg uint32, last bool, plain []byte) []byte {
	nonce, aad := o.params(part, write, seg, last)
	return o.aead.Seal(dst, nonce, plain, aad)
}

// OpenSegment appends one segment's plaintext to dst.
func (o *Object) OpenSegment(dst []byte, part uint32, write uint64, seg uint32, last bool, sealed []byte) ([]byte, error) {
	nonce, aad := o.params(part, write, seg, last)
	out, err := o.aead.Open(dst, nonce, sealed, aad)
	if err != nil {
		return dst, ErrOpen
	}
	return out, nil
}
