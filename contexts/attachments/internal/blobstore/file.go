package blobstore

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File is a store in a local directory: objects/<key>, and
// uploads/<id>/<n> for the parts of an upload in progress. Completing an
// upload writes the object to a temporary file and renames it into place,
// so a reader never sees half an object.
type File struct{ dir string }

// NewFile returns a store rooted at dir, creating it (0700).
func NewFile(dir string) (*File, error) {
	for _, sub := range []string{"objects", "uploads"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("blob store: %w", err)
		}
	}
	return &File{dir: dir}, nil
}

// path refuses keys that would leave the directory.
func (f *File) path(parts ...string) (string, error) {
	for _, p := range parts {
		if p == "" || strings.Contains(p, "..") || strings.ContainsAny(p, "\\\x00") || strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("blob store: bad key %q", p)
		}
	}
	return filepath.Join(append([]string{f.dir}, parts...)...), nil
}

func (f *File) Begin(ctx context.Context, key string) (string, error) {
	if _, err := f.path("objects", key); err != nil {
		return "", err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	upload := hex.EncodeToString(id)
	return upload, os.MkdirAll(filepath.Join(f.dir, "uploads", upload), 0o700)
}

func (f *File) PutPart(ctx context.Context, key, upload string, n int, body io.Reader, size int64) (string, error) {
	dir, err := f.path("uploads", upload)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("upload %s: %w", upload, ErrNotFound)
	}
	sum := md5.New()
	if err := writeAtomic(filepath.Join(dir, strconv.Itoa(n)), io.TeeReader(body, sum), size); err != nil {
		return "", err
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

func (f *File) Complete(ctx context.Context, key, upload string, etags []string) error {
	dir, err := f.path("uploads", upload)
	if err != nil {
		return err
	}
	dst, err := f.path("objects", key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".complete-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	for i, etag := range etags {
		body, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i+1)))
		if errors.Is(err, fs.ErrNotExist) {
			tmp.Close()
			return fmt.Errorf("upload %s part %d: %w", upload, i+1, ErrNotFound)
		} else if err != nil {
			tmp.Close()
			return err
		}
		if sum := md5.Sum(body); hex.EncodeToString(sum[:]) != etag {
			tmp.Close()
			return fmt.Errorf("upload %s part %d: entity tag %s does not match the stored part", upload, i+1, etag)
		}
		if _, err := tmp.Write(body); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

func (f *File) Abort(ctx context.Context, key, upload string) error {
	dir, err := f.path("uploads", upload)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

func (f *File) ReadAt(ctx context.Context, key string, off, n int64) ([]byte, error) {
	p, err := f.path("objects", key)
	if err != nil {
		return nil, err
	}
	fh, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("object %s: %w", key, ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	defer fh.Close()
	buf := make([]byte, n)
	if _, err := fh.ReadAt(buf, off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, fmt.Errorf("object %s [%d, %d): %w", key, off, off+n, err)
	}
	return buf, nil
}

func (f *File) Size(ctx context.Context, key string) (int64, error) {
	p, err := f.path("objects", key)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("object %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (f *File) Delete(ctx context.Context, key string) error {
	p, err := f.path("objects", key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeAtomic writes exactly size bytes of body to a file through a
// temporary one and a rename.
func writeAtomic(path string, body io.Reader, size int64) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if n, err := io.Copy(tmp, io.LimitReader(body, size)); err != nil || n != size {
		tmp.Close()
		if err == nil {
			err = fmt.Errorf("part body ended after %d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
		}
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
