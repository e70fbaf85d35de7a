# Turns `go test -bench` lines carrying req/s, p50-ms and p99-ms metrics
# (several -count runs) into a markdown table of medians, plus the MCP/HTTP
# p50 and p99 ratios per concurrency: target mcp beside http, and X_mcp
# beside X_http.
function median(s,    n, a, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark[A-Za-z]+\//, "", name)
	if (!(name in seen)) { seen[name] = 1; order[++count] = name }
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "req/s") rps[name] = rps[name] " " $i
		if ($(i + 1) == "p50-ms") p50[name] = p50[name] " " $i
		if ($(i + 1) == "p99-ms") p99[name] = p99[name] " " $i
	}
	runs[name]++
}
END {
	print "| target | concurrency | req/s | p50 ms | p99 ms | runs |"
	print "| --- | ---: | ---: | ---: | ---: | ---: |"
	for (k = 1; k <= count; k++) {
		name = order[k]; split(name, parts, "/"); t = parts[1]; c = parts[2]
		sub(/^target=/, "", t); sub(/^c=/, "", c)
		m50[t, c] = median(p50[name])
		printf "| %s | %s | %.0f | %.3f | %.3f | %d |\n", t, c, median(rps[name]), m50[t, c], median(p99[name]), runs[name]
		cs[c] = 1
	}
	print ""
	for (k = 1; k <= count; k++) {
		name = order[k]; split(name, parts, "/"); t = parts[1]; c = parts[2]
		sub(/^target=/, "", t); sub(/^c=/, "", c)
		if (t !~ /(^|_)mcp$/) continue
		h = t; sub(/mcp$/, "http", h)
		hn = "target=" h "/c=" c
		if (!(hn in seen) || median(p50[hn]) <= 0) continue
		base = t; sub(/_?mcp$/, "", base); if (base == "") base = "mcp"
		printf "%s: MCP / HTTP at concurrency %s: p50 %.2f×, p99 %.2f×\n", base, c, median(p50[name]) / median(p50[hn]), median(p99[name]) / median(p99[hn])
	}
}
