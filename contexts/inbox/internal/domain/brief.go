package domain

import (
	"slices"
	"time"
	"unicode/utf8"
)

// Session brief bounds (seed 002, "The session brief").
const (
	BriefText     = 200    // an entry's text is cut to this many characters
	BriefAnswers  = 10     // answers listed
	BriefEvents   = 20     // events listed
	BriefRankPool = 200    // the newest events the rest are ranked among
	BriefCountCap = 10_000 // a section's count of what it left out stops here
)

// The bases of a brief's window.
const (
	BasisFeedCursor      = "feed_cursor"
	BasisPreviousSession = "previous_session"
	BasisNone            = "none"
)

// Cut returns text cut to BriefText characters and whether it was cut.
func Cut(text string) (string, bool) {
	if utf8.RuneCountInString(text) <= BriefText {
		return text, false
	}
	r := []rune(text)
	return string(r[:BriefText]), true
}

// BriefEvent is a window event as the brief ranks it.
type BriefEvent struct {
	Seq  int64
	At   time.Time
	Own  bool // the caller's own write or session lifecycle
	Open bool // an item still waiting on someone
}

// RankEvents orders a window's events as the brief lists them: items
// still waiting on someone first, newest first; then, among the newest
// BriefRankPool, others' work before the caller's own, newest first
// within each. It returns at most BriefEvents and how many it left out.
func RankEvents(events []BriefEvent) ([]BriefEvent, int) {
	byNewest := func(a, b BriefEvent) int { return int(b.Seq - a.Seq) }
	var open, rest []BriefEvent
	for _, e := range events {
		if e.Open {
			open = append(open, e)
		} else {
			rest = append(rest, e)
		}
	}
	slices.SortFunc(open, byNewest)
	slices.SortFunc(rest, byNewest)
	rest = rest[:min(len(rest), BriefRankPool)]
	slices.SortStableFunc(rest, func(a, b BriefEvent) int {
		switch {
		case a.Own == b.Own:
			return byNewest(a, b)
		case b.Own:
			return -1
		}
		return 1
	})
	ranked := append(open, rest...)
	shown := ranked[:min(len(ranked), BriefEvents)]
	return shown, len(events) - len(shown)
}
