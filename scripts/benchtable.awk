# Turns `go test -bench` lines carrying req/s, p50-ms and p99-ms metrics
# (several -count runs) into a markdown table of medians, plus the MCP/HTTP
# p50 ratio per concurrency.
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
	for (c in cs) if ((("http", c) in m50) && (("mcp", c) in m50) && m50["http", c] > 0)
		printf "MCP p50 / HTTP p50 at concurrency %s: %.2f×\n", c, m50["mcp", c] / m50["http", c]
}
