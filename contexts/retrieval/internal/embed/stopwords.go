package embed

// stopwords is a compact English list: function words that carry no topic.
// It is fixed (part of the model), so changing it means a new model id.
var stopwords = func() map[string]struct{} {
	words := []string{
		"a", "about", "above", "after", "again", "against", "all", "almost", "already", "also",
		"although", "always", "am", "among", "an", "and", "another", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
		"between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "done",
		"down", "during", "each", "either", "else", "etc", "ever", "every", "few", "for", "from", "further", "had",
		"has", "have", "having", "he", "hence", "her", "here", "hers", "herself", "him", "himself",
		"his", "how", "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just",
		"may", "me", "might", "more", "most", "must", "my", "myself", "neither", "no", "nor",
		"not", "now", "of", "off", "often", "on", "once", "only", "or", "other", "our", "ours",
		"ourselves", "out", "over", "own", "per", "quite", "rather", "same", "shall", "she", "should", "since", "so", "some",
		"such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
		"there", "these", "they", "this", "those", "though", "through", "thus", "to", "too", "under",
		"until", "up", "upon", "very", "via", "was", "we", "were", "what", "when", "where",
		"whether", "which", "while", "who", "whom", "whose", "why", "will", "with", "within",
		"without", "would", "yet", "you", "your", "yours", "yourself", "yourselves",
	}
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()

// isStopword reports whether the lowercased word is a stopword; the map
// lookup with a converted []byte key does not allocate.
func isStopword(word []byte) bool {
	_, ok := stopwords[string(word)]
	return ok
}
