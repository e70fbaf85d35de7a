package main

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/omlhub/oml/platform/transport"
)

// BenchmarkTrailer measures what the notification trailer costs a tool call
// with nothing pending: oml_workarea_info over MCP on the server as
// assembled, beside the same server without the trailer, in one run:
//
//	go test -run '^$' -bench Trailer -benchtime 3000x ./cmd/oml-server
func BenchmarkTrailer(b *testing.B) {
	e := setupBench(b)
	plainOpts := e.app.surface
	plainOpts.Trailer = nil
	plain := httptest.NewServer(transport.New(plainOpts, e.app.modules...))
	defer plain.Close()
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("target=mcp_trailer/c=%d", c), func(b *testing.B) {
			e.load(b, loadSpec{Target: "mcp", Concurrency: c, Warmup: 100})
		})
		b.Run(fmt.Sprintf("target=mcp_no_trailer/c=%d", c), func(b *testing.B) {
			e.load(b, loadSpec{Target: "mcp", Concurrency: c, Warmup: 100, URL: plain.URL})
		})
	}
}
