package embed

import (
	"context"
	"fmt"
	"testing"
)

// kbText is 1 KB of English prose, no sentence repeated.
const kbText = "An experimental study of a wing in a propeller slipstream was made in order to determine " +
	"the spanwise distribution of the lift increase due to slipstream at different angles of attack of " +
	"the wing and at different free stream to slipstream velocity ratios. The results were intended in " +
	"part as an evaluation basis for different theoretical treatments of this problem. The comparative " +
	"span loading curves, together with supporting evidence, showed that a substantial part of the lift " +
	"increment produced by the slipstream was due to a destalling or boundary-layer-control effect. The " +
	"integrated remaining lift increment, after subtracting this destalling lift, was found to agree well " +
	"with a potential flow theory. An empirical evaluation of the destalling effects was made for the " +
	"specific configuration of the experiment. Simple shear flow past a flat plate in an incompressible " +
	"fluid of small viscosity was treated next, with the vorticity of the oncoming stream kept constant " +
	"across the layer, and heat transfer measurements on blunt bodies at hypersonic speeds closed the set."

// BenchmarkBuiltinEmbed measures one 1 KB text per operation.
func BenchmarkBuiltinEmbed(b *testing.B) {
	weights := map[string]float32{}
	for _, term := range Terms(kbText) {
		weights[term] = 2
	}
	for _, tc := range []struct {
		name    string
		role    Role
		weights map[string]float32
	}{
		{"document", Document, nil},
		{"query", Query, weights},
	} {
		for _, dim := range []int{384, 1024} {
			b.Run(fmt.Sprintf("%s/dim=%d", tc.name, dim), func(b *testing.B) {
				e := NewBuiltin(dim)
				ctx := context.Background()
				texts := []string{kbText}
				b.SetBytes(int64(len(kbText)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.Embed(ctx, tc.role, texts, tc.weights); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCranfield reports the vector leg's nDCG@10 on all of Cranfield
// (1,400 documents, 225 queries, exact cosine ranking) per dimension:
// go test -run '^$' -bench Cranfield -benchtime 1x.
func BenchmarkCranfield(b *testing.B) {
	c := loadCranfield(b)
	for _, dim := range []int{384, 768, 1024, 1536} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			var ndcg float64
			for b.Loop() {
				ndcg, _ = ndcgAt10(b, c, NewBuiltin(dim), 0)
			}
			b.ReportMetric(ndcg, "nDCG@10")
		})
	}
}
