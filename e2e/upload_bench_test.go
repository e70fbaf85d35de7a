package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// BenchmarkUploadThroughput uploads a 256 MiB and a 1 GiB file
// (UPLOAD_BENCH_BYTES, a comma-separated list of sizes, to change them)
// through oml-server — open a session, PUT 8 MiB parts in order — and, in
// the same run against the same Versity S3 Gateway, as a raw S3 multipart
// upload with the same part size; rounds alternate and each size's table
// quotes medians, the ratio and the server's peak RSS so far:
//
//	go test -run '^$' -bench UploadThroughput -benchtime 1x ./e2e
func BenchmarkUploadThroughput(b *testing.B) {
	sizes := []int64{256 << 20, 1 << 30}
	if v := os.Getenv("UPLOAD_BENCH_BYTES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || n <= 0 {
				b.Fatalf("UPLOAD_BENCH_BYTES: want sizes in bytes, comma-separated, got %q", v)
			}
			sizes = append(sizes, n)
		}
	}
	s := startServer(b)
	tm := newTeam(b, s)
	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(os.Getenv("OML_TEST_S3_ENDPOINT")), Region: "us-east-1", UsePathStyle: true,
		Credentials:                credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
	})
	for _, size := range sizes {
		uploadThroughput(b, s, tm.writer.Token, client, size)
	}
}

// uploadThroughput runs three alternating rounds of the three uploads of
// one file of size bytes and prints their table.
func uploadThroughput(b *testing.B, s *server, key string, client *s3.Client, size int64) {
	const partSize = 8 << 20
	path := filepath.Join(b.TempDir(), "upload.bin")
	writeRandomFile(b, path, size)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	presign := s3.NewPresignClient(client)
	var raw, unsigned, oml []float64
	for round := 0; round < 3; round++ {
		// Fresh content every round: OML stores equal content once.
		stamp := make([]byte, 16)
		_, _ = rand.Read(stamp)
		if _, err := f.WriteAt(stamp, 0); err != nil {
			b.Fatal(err)
		}
		digest := fileSHA256(b, f)
		raw = append(raw, mbps(size, timeIt(b, func() { rawMultipart(b, client, nil, s.Bucket, f, size, partSize, round) })))
		unsigned = append(unsigned, mbps(size, timeIt(b, func() { rawMultipart(b, client, presign, s.Bucket, f, size, partSize, round) })))
		oml = append(oml, mbps(size, timeIt(b, func() { omlUpload(b, s, key, f, size, partSize, digest) })))
	}
	rss := peakRSS(b, s.cmd.Process.Pid)
	slices.Sort(raw)
	slices.Sort(unsigned)
	slices.Sort(oml)
	best := max(raw[1], unsigned[1])
	fmt.Printf("\n| upload of %s, %d MiB parts, in order | MB/s (median of 3) | runs | vs the faster raw |\n| --- | ---: | --- | ---: |\n", humanSize(size), partSize>>20)
	fmt.Printf("| raw S3 multipart PUT, aws-sdk-go-v2 defaults (SigV4 hashes each part) | %.0f | %s | %.2f× |\n", raw[1], runs(raw), raw[1]/best)
	fmt.Printf("| raw S3 multipart PUT, presigned parts (unsigned payload) | %.0f | %s | %.2f× |\n", unsigned[1], runs(unsigned), unsigned[1]/best)
	fmt.Printf("| through oml-server (HTTP PUT → hash, seal, stream → S3 part) | %.0f | %s | %.2f× |\n", oml[1], runs(oml), oml[1]/best)
	fmt.Printf("\noml-server peak RSS (VmHWM) so far: %.0f MiB\n", float64(rss)/(1<<20))
}

func runs(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(parts, ", ")
}

func timeIt(b *testing.B, fn func()) time.Duration {
	b.Helper()
	start := time.Now()
	fn()
	return time.Since(start)
}

func mbps(size int64, d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }

func humanSize(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

func writeRandomFile(b *testing.B, path string, size int64) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		b.Fatal(err)
	}
}

func fileSHA256(b *testing.B, f *os.File) string {
	b.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		b.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func readPart(b *testing.B, f *os.File, buf []byte, off int64) []byte {
	b.Helper()
	n, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		b.Fatal(err)
	}
	return buf[:n]
}

// rawMultipart is the baseline: the same bytes as an S3 multipart upload,
// with the SDK's UploadPart, or (presign non-nil) with presigned parts sent
// by a plain HTTP client, as oml-server sends them.
func rawMultipart(b *testing.B, c *s3.Client, presign *s3.PresignClient, bucket string, f *os.File, size, partSize int64, round int) {
	b.Helper()
	ctx := context.Background()
	key := fmt.Sprintf("raw/%d/round-%d-%t", size, round, presign != nil)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, partSize)
	var parts []types.CompletedPart
	for n, off := int32(1), int64(0); off < size; n, off = n+1, off+partSize {
		body := readPart(b, f, buf, off)
		if presign != nil {
			parts = append(parts, types.CompletedPart{ETag: aws.String(presignedPart(b, presign, bucket, key, up.UploadId, n, body)), PartNumber: aws.Int32(n)})
			continue
		}
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: &bucket, Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(n),
			Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		})
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &bucket, Key: &key, UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	}); err != nil {
		b.Fatal(err)
	}
}

func presignedPart(b *testing.B, p *s3.PresignClient, bucket, key string, upload *string, n int32, body []byte) string {
	b.Helper()
	signed, err := p.PresignUploadPart(context.Background(), &s3.UploadPartInput{
		Bucket: &bucket, Key: &key, UploadId: upload, PartNumber: aws.Int32(n), ContentLength: aws.Int64(int64(len(body))),
	})
	if err != nil {
		b.Fatal(err)
	}
	req, err := http.NewRequest(signed.Method, signed.URL, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	for k, v := range signed.SignedHeader {
		if !strings.EqualFold(k, "host") && !strings.EqualFold(k, "content-length") {
			req.Header[k] = v
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		out, _ := io.ReadAll(resp.Body)
		b.Fatalf("presigned part %d: %d %s", n, resp.StatusCode, out)
	}
	return resp.Header.Get("ETag")
}

// omlUpload sends the file through oml-server's upload routes.
func omlUpload(b *testing.B, s *server, key string, f *os.File, size, partSize int64, digest string) {
	b.Helper()
	ses := decode[uploadSession](b, s.do(b, "POST", "/v1/attachments/uploads", key, map[string]any{
		"media_type": "application/octet-stream", "size_bytes": size, "expected_digest": "sha256:" + digest, "part_size_bytes": partSize,
	}), 201)
	buf := make([]byte, partSize)
	client := &http.Client{}
	for n, off := 1, int64(0); off < size; n, off = n+1, off+partSize {
		body := readPart(b, f, buf, off)
		req, err := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/v1/attachments/uploads/%s/parts/%d", s.URL, ses.UploadSession, n), bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("part %d: %d %s", n, resp.StatusCode, out)
		}
	}
}

// peakRSS reads a process's high-water resident set size.
func peakRSS(b *testing.B, pid int) int64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc status")
	return 0
}
