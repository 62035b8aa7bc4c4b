package funcs

import (
	"errors"
	"fmt"
)

// Fmt is the fmt namespace: print, printf, println, and errorf and warnf,
// which fail the build or warn with a theme's own message.
type Fmt struct{ e *env }

// Print is fmt.Sprint.
func (*Fmt) Print(a ...any) string { return fmt.Sprint(a...) }

// Printf is fmt.Sprintf.
func (*Fmt) Printf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// Println is fmt.Sprintln.
func (*Fmt) Println(a ...any) string { return fmt.Sprintln(a...) }

// Errorf fails the render with the theme's message.
func (*Fmt) Errorf(format string, a ...any) (string, error) {
	return "", errors.New(fmt.Sprintf(format, a...))
}

// Erroridf fails the render with the theme's message; the id, which Hugo
// uses to let a site ignore the error, is not used.
func (f *Fmt) Erroridf(id, format string, a ...any) (string, error) {
	return f.Errorf(format, a...)
}

// Warnf logs the theme's message as a warning. A message is logged once
// per build however many pages print it, as in Hugo.
func (f *Fmt) Warnf(format string, a ...any) string {
	msg := fmt.Sprintf(format, a...)
	if _, seen := f.e.warned.LoadOrStore(msg, true); !seen {
		f.e.log.Warn("theme: " + msg)
	}
	return ""
}

// Warnidf is Warnf with an id.
func (f *Fmt) Warnidf(id, format string, a ...any) string { return f.Warnf(format, a...) }
