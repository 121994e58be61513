package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// step is one item of an events list: an event to send, or (event nil) a
// duration to move the clock forward by.
type step struct {
	event   *statechart.Event
	advance time.Duration
}

// stepList is the value of the --events flag; the flag may be repeated.
type stepList []step

func (l *stepList) String() string { return fmt.Sprintf("%d steps", len(*l)) }

func (l *stepList) Set(s string) error {
	steps, err := parseSteps(s)
	if err != nil {
		return err
	}
	*l = append(*l, steps...)
	return nil
}

// parseSteps parses an events list: comma-separated items, each an event
// type, a JSON event object or +DURATION. An empty list is no steps.
func parseSteps(s string) ([]step, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	items, err := splitEvents(s)
	if err != nil {
		return nil, err
	}
	steps := make([]step, len(items))
	for i, item := range items {
		st, err := parseStep(item)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i+1, err)
		}
		steps[i] = st
	}
	return steps, nil
}

func parseStep(item string) (step, error) {
	switch {
	case item == "":
		return step{}, errors.New("empty event")
	case strings.HasPrefix(item, "+"):
		d, err := time.ParseDuration(item[1:])
		if err != nil {
			return step{}, fmt.Errorf("%q: after + comes a duration such as 250ms or 2s", item)
		}
		if d < 0 {
			return step{}, fmt.Errorf("%q: the clock cannot go back", item)
		}
		return step{advance: d}, nil
	case strings.HasPrefix(item, "{"):
		var ev statechart.Event
		if err := json.Unmarshal([]byte(item), &ev); err != nil {
			return step{}, fmt.Errorf("%s: %w", item, err)
		}
		return step{event: &ev}, nil
	}
	ev := statechart.NewEvent(item)
	return step{event: &ev}, nil
}

// splitEvents splits s on the commas that are outside JSON objects and
// arrays (and so outside their strings), and trims spaces around each item.
func splitEvents(s string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	var str jsonx.Strings
	for i := 0; i < len(s); i++ {
		c := s[i]
		if str.Skip(c) {
			continue
		}
		switch c {
		case '"':
			if depth > 0 { // only objects and arrays hold strings; a bare event name is read as it is
				str.Open()
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q at offset %d of the events list", c, i)
			}
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	switch {
	case str.InString():
		return nil, errors.New("unterminated string in the events list")
	case depth > 0:
		return nil, errors.New("unclosed { or [ in the events list")
	}
	return append(items, strings.TrimSpace(s[start:])), nil
}
