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
//
// The master key can be replaced: the new one wraps from then on, the old
// ones (Secrets.Previous) still unwrap, and [Keys.Rewrap] moves a stored
// data key to the new KEK. Which KEK a wrapped key is under needs no
// record: only the right one authenticates. The address key is kept
// across rotations in a file of its own (Secrets.Address).
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
	"slices"
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

// Keys are the keys derived from the master keys.
type Keys struct {
	kek      cipher.AEAD   // wraps new data keys
	previous []cipher.AEAD // earlier KEKs: unwrap only, until a rewrap pass is done
	address  []byte
}

// Secrets are the deployment's key material. Master wraps every new data
// key and, unless Address is set, makes the content addresses. During a
// master-key rotation Previous holds the earlier master keys, whose KEKs
// still open the data keys wrapped before, and Address holds the address
// key derived from the first master key ([AddressKey]), so content keeps
// its addresses.
type Secrets struct {
	Master   []byte
	Previous [][]byte
	Address  []byte
}

// NewKeys derives the key-encryption keys and the address key.
func NewKeys(s Secrets) (*Keys, error) {
	kek, err := deriveKEK(s.Master)
	if err != nil {
		return nil, err
	}
	k := &Keys{kek: kek}
	for _, m := range s.Previous {
		old, err := deriveKEK(m)
		if err != nil {
			return nil, fmt.Errorf("previous %w", err)
		}
		k.previous = append(k.previous, old)
	}
	switch {
	case s.Address == nil:
		if k.address, err = AddressKey(s.Master); err != nil {
			return nil, err
		}
	case len(s.Address) != keySize:
		return nil, fmt.Errorf("seal: address key must be %d bytes, got %d", keySize, len(s.Address))
	case hmac.Equal(s.Address, s.Master) || slices.ContainsFunc(s.Previous, func(m []byte) bool { return hmac.Equal(s.Address, m) }):
		return nil, errors.New("seal: the address key file holds a master key, not the address key rotate-master-key wrote")
	default:
		k.address = s.Address
	}
	return k, nil
}

func deriveKEK(master []byte) (cipher.AEAD, error) {
	if len(master) != keySize {
		return nil, fmt.Errorf("seal: master key must be %d bytes, got %d", keySize, len(master))
	}
	kek, err := hkdf.Key(sha256.New, master, nil, "oml/kek/v1", keySize)
	if err != nil {
		return nil, err
	}
	return newAEAD(kek)
}

// AddressKey is the address key a master key makes; a rotation keeps it
// in a file of its own (Secrets.Address) so the old master can go.
func AddressKey(master []byte) ([]byte, error) {
	if len(master) != keySize {
		return nil, fmt.Errorf("seal: master key must be %d bytes, got %d", keySize, len(master))
	}
	return hkdf.Key(sha256.New, master, nil, "oml/address/v1", keySize)
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

// Unwrap opens a wrapped data key under the current KEK or, failing
// that, under each previous one in turn (GCM's tag tells which fits).
func (k *Keys) Unwrap(wrapped []byte, tenant, address string) ([]byte, error) {
	key, _, err := k.unwrap(wrapped, tenant, address)
	return key, err
}

func (k *Keys) unwrap(wrapped []byte, tenant, address string) (key []byte, current bool, err error) {
	if len(wrapped) < nonceSize {
		return nil, false, ErrOpen
	}
	aad := wrapAAD(tenant, address)
	for i, kek := range append([]cipher.AEAD{k.kek}, k.previous...) {
		key, err := kek.Open(nil, wrapped[:nonceSize], wrapped[nonceSize:], aad)
		if err == nil && len(key) == keySize {
			return key, i == 0, nil
		}
	}
	return nil, false, ErrOpen
}

// Rewrap returns wrapped sealed under the current KEK instead, or nil
// when it already is. ErrOpen: no KEK this deployment holds opens it.
func (k *Keys) Rewrap(wrapped []byte, tenant, address string) ([]byte, error) {
	key, current, err := k.unwrap(wrapped, tenant, address)
	if err != nil || current {
		return nil, err
	}
	return k.Wrap(key, tenant, address)
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
