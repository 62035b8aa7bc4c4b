package funcs

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Time is the time namespace. time is also a function of its own:
// {{ time "2015-01-21" }} parses a date, {{ time.Format ... }} names the
// namespace.
type Time struct{ e *env }

// AsTimeOrNamespace is what the name time calls: with no argument the
// namespace, with one the time it parses (AsTime).
func (t *Time) AsTimeOrNamespace(args ...any) (any, error) {
	switch len(args) {
	case 0:
		return t, nil
	case 1:
		return t.AsTime(args[0])
	case 2:
		return t.AsTime(args[0], args[1])
	}
	return nil, errors.New("time: want a date and at most a time zone")
}

// AsTime parses a date (in the site's time zone, or the one named).
func (t *Time) AsTime(v any, zone ...any) (time.Time, error) {
	loc := t.e.loc()
	if len(zone) > 0 {
		name, err := toString(zone[0])
		if err != nil {
			return time.Time{}, fmt.Errorf("time: %w", err)
		}
		if loc, err = time.LoadLocation(name); err != nil {
			return time.Time{}, fmt.Errorf("time: %w", err)
		}
	}
	return toTime(v, loc)
}

// Now is the build's time.
func (t *Time) Now() time.Time { return t.e.now() }

// Format formats a date (a time, or text that parses as one) with a Go
// layout ("2006-01-02") or one of Hugo's named ones (":date_long").
func (t *Time) Format(layout string, v any) (string, error) {
	tm, err := toTime(v, t.e.loc())
	if err != nil {
		return "", fmt.Errorf("dateFormat: %w", err)
	}
	return formatTime(tm, layout), nil
}

// In converts a time to the named time zone.
func (t *Time) In(zone string, v any) (time.Time, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return time.Time{}, fmt.Errorf("time.In: %w", err)
	}
	tm, err := toTime(v, t.e.loc())
	if err != nil {
		return time.Time{}, fmt.Errorf("time.In: %w", err)
	}
	return tm.In(loc), nil
}

// ParseDuration parses a Go duration ("1h12m").
func (t *Time) ParseDuration(v any) (time.Duration, error) {
	s, err := toString(v)
	if err != nil {
		return 0, fmt.Errorf("time.ParseDuration: %w", err)
	}
	return time.ParseDuration(s)
}

var durationUnits = map[string]time.Duration{
	"nanosecond": time.Nanosecond, "ns": time.Nanosecond,
	"microsecond": time.Microsecond, "us": time.Microsecond, "µs": time.Microsecond,
	"millisecond": time.Millisecond, "ms": time.Millisecond,
	"second": time.Second, "s": time.Second,
	"minute": time.Minute, "m": time.Minute,
	"hour": time.Hour, "h": time.Hour,
}

// Duration is n of the unit: duration "second" 90 is 1m30s.
func (t *Time) Duration(unit, n any) (time.Duration, error) {
	u, err := toString(unit)
	if err != nil {
		return 0, fmt.Errorf("duration: %w", err)
	}
	d, ok := durationUnits[u]
	if !ok {
		return 0, fmt.Errorf("duration: %q is not a unit of time", u)
	}
	k, err := toInt64(n)
	if err != nil {
		return 0, fmt.Errorf("duration: %w", err)
	}
	return time.Duration(k) * d, nil
}

// dateLayouts are the forms of dates that text is tried in, the ones
// front matter and data files use.
var dateLayouts = []string{
	time.RFC3339Nano,
	time.RFC3339,
	"2006-01-02T15:04:05", // ISO 8601 without a zone
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999 -0700 MST", // time.Time's String
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
	"02 Jan 2006",
	time.RFC1123Z,
	time.RFC1123,
	time.RFC822Z,
	time.RFC822,
	time.RFC850,
	time.ANSIC,
	time.UnixDate,
	time.RubyDate,
	"January 2, 2006",
	"Jan 2, 2006",
}

func toTime(v any, loc *time.Location) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x, nil
	case *time.Time:
		if x == nil {
			return time.Time{}, nil
		}
		return *x, nil
	case interface{ AsTime() time.Time }:
		return x.AsTime(), nil
	case int, int64, int32, uint, uint32, uint64:
		n, _ := toInt64(x)
		return time.Unix(n, 0).In(loc), nil
	}
	s, err := toString(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("unable to cast %#v of type %T to a time", v, v)
	}
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unable to parse date %q", s)
}

// namedLayouts are Hugo's layouts by name, for English.
var namedLayouts = map[string]string{
	":date_full":   "Monday, January 2, 2006",
	":date_long":   "January 2, 2006",
	":date_medium": "Jan 2, 2006",
	":date_short":  "1/2/06",
	":time_full":   "3:04:05 pm MST",
	":time_long":   "3:04:05 pm MST",
	":time_medium": "3:04:05 pm",
	":time_short":  "3:04 pm",
}

func formatTime(t time.Time, layout string) string {
	if l, ok := namedLayouts[layout]; ok {
		return t.Format(l)
	}
	return t.Format(layout)
}
